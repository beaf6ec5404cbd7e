# SPDX-License-Identifier: Apache-2.0
"""kareus.torch: a small model trained for a few iterations as a pipeline stage under a schedule
leaves exactly the schedule's clock changes in the fake NVML's log, then one reset; the reset also
comes after an exception in the loop or a loop that diverges from the schedule."""

import pytest
import torch

import kareus
import kareus.torch
from schedule_log import expected_setters, reset_line, stage_order

MICROBATCHES = 3  # tests/data/runtime/two_stages.json


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))


def make_data():
    generator = torch.Generator().manual_seed(1)
    return [(torch.randn(4, 8, generator=generator), torch.randn(4, 1, generator=generator))
            for _ in range(MICROBATCHES)]


def run_instructions(model, order, data, losses):
    """The stage's forwards and backwards in `order`, as a 1F1B pipeline stage runs them."""
    for microbatch, direction in order:
        if direction == "forward":
            x, y = data[microbatch]
            losses[microbatch] = torch.nn.functional.mse_loss(model(x), y)
        else:
            losses.pop(microbatch).backward()


def train(model, stage, order, iterations, data):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(iterations):
        optimizer.zero_grad()
        run_instructions(model, order, data, {})
        optimizer.step()
        stage.step()


@pytest.mark.parametrize("stage_index", [0, 1])
def test_training_plays_the_schedule_clocks(clocks_schedule_path, schedule_document, nvml_log,
                                            stage_index):
    schedule_path = clocks_schedule_path
    model, data = make_model(), make_data()
    before = [p.detach().clone() for p in model.parameters()]
    order = stage_order(schedule_document, stage_index)
    with kareus.torch.PipelineStage(model, schedule_path, stage=stage_index, gpu=0) as stage:
        train(model, stage, order, 3, data)
        with torch.no_grad():  # evaluation forwards are not instructions
            model(data[0][0])
    assert nvml_log.lines() == expected_setters(schedule_document, stage_index, 3) + [reset_line()]
    assert stage.iteration == 3
    assert stage.controller.stats.instructions == 3 * len(order)
    assert len(stage.measurements) == 3
    for m in stage.measurements:
        assert m.time_s > 0 and m.total_energy_j > 0
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters()))


def test_exception_in_the_loop_resets_the_clocks(clocks_schedule_path, schedule_document, nvml_log):
    schedule_path = clocks_schedule_path
    model, data = make_model(), make_data()
    order = stage_order(schedule_document, 0)
    with pytest.raises(RuntimeError, match="data loader failed"):
        with kareus.torch.PipelineStage(model, schedule_path, stage=0) as stage:
            train(model, stage, order, 1, data)
            run_instructions(model, order[:3], data, {})
            # A clock is surely locked when the loop fails (otherwise nothing needs a reset).
            stage.controller.wait_until_applied()
            raise RuntimeError("data loader failed")
    # One whole iteration and three instructions of the next were played, then the reset.
    instructions = schedule_document["stages"][0]["instructions"]
    played = {"stages": [{"instructions": instructions + instructions[:3]}]}
    assert nvml_log.lines() == expected_setters(played, 0, 1) + [reset_line()]
    # The hooks are gone: the model runs without the controller, which would refuse now.
    model(data[0][0]).sum().backward()


def test_a_loop_out_of_the_schedules_order_raises_and_resets(clocks_schedule_path, nvml_log):
    schedule_path = clocks_schedule_path
    model, data = make_model(), make_data()
    with pytest.raises(kareus.Error, match="schedule runs the backward of microbatch 0"):
        with kareus.torch.PipelineStage(model, schedule_path, stage=1) as stage:
            # Stage 1 runs F0 B0 F1 ...; this loop runs F0 F1.
            run_instructions(model, [(0, "forward")], data, {})
            stage.controller.wait_until_applied()
            run_instructions(model, [(1, "forward")], data, {})
    assert nvml_log.lines() == ["nvmlDeviceSetGpuLockedClocks 0 1200 1200", reset_line()]
    assert stage.measurements == []


def test_a_backward_out_of_order_raises_from_backward(clocks_schedule_path, nvml_log):
    schedule_path = clocks_schedule_path
    model, data = make_model(), make_data()
    with kareus.torch.PipelineStage(model, schedule_path, stage=0) as stage:
        losses = {}
        # Stage 0 runs F0 F1 B0 ...; this loop runs F0 F1 B1.
        run_instructions(model, [(0, "forward"), (1, "forward")], data, losses)
        stage.controller.wait_until_applied()
        with pytest.raises(kareus.Error, match="called the backward of microbatch 1"):
            losses[1].backward()
        with pytest.raises(kareus.Error, match="ended after 2 of its 6"):
            stage.step()
    assert nvml_log.lines()[-1] == reset_line()


def test_an_output_without_grad_is_refused(clocks_schedule_path, nvml_log):
    schedule_path = clocks_schedule_path
    frozen = make_model().requires_grad_(False)
    with kareus.torch.PipelineStage(frozen, schedule_path, stage=0, measure_energy=False) as stage:
        with pytest.raises(kareus.Error, match="requires grad"):
            frozen(make_data()[0][0])
    assert stage.measurements == []


def test_record_writes_every_instruction_with_its_end(clocks_schedule_path, schedule_document,
                                                      nvml_log, tmp_path):
    """record= writes the measurement record: every forward and backward of every iteration as
    one line whose end the hooks reported, one line per iteration, and the end line."""
    import json
    model, data = make_model(), make_data()
    order = stage_order(schedule_document, 1)
    path = tmp_path / "run.jsonl"
    with kareus.torch.PipelineStage(model, clocks_schedule_path, stage=1, gpu=0,
                                    record=path) as stage:
        assert stage.record_path == str(path)
        train(model, stage, order, 2, data)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["kareus_measurement"] == 1 and lines[0]["stage"] == 1
    spans = [x for x in lines if x.get("type") == "instruction"]
    assert [(x["microbatch"], x["direction"]) for x in spans] == order * 2
    assert all(x["ended"] and x["time_s"] >= 0 and x["energy_j"] >= 0 for x in spans)
    assert [x["iteration"] for x in lines if x.get("type") == "iteration"] == [0, 1]
    assert lines[-1] == {"type": "end"}


def test_record_refuses_a_file_that_holds_measurements(clocks_schedule_path, nvml_log, tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text("earlier\n")
    with pytest.raises(kareus.Error, match="already holds measurements"):
        kareus.torch.PipelineStage(make_model(), clocks_schedule_path, stage=0, gpu=0, record=path)
    assert path.read_text() == "earlier\n"
