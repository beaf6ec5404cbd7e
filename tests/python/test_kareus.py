# SPDX-License-Identifier: Apache-2.0
"""kareus (the pybind11 module): planning, schedules, the frequency controller and the energy
monitor, the latter two against the fake NVML (tests/nvml/fake_nvml)."""

import json
import os
import pathlib
import signal
import time

import pytest

import kareus
from schedule_log import expected_setters, reset_line, stage_order


@pytest.fixture(scope="module")
def workload():
    return kareus.Workload("qwen3-1.7b", "a100-sxm4-40gb", tp=2, pp=2, microbatches=4,
                           microbatch_size=2)


@pytest.fixture(scope="module")
def planned(workload):
    return kareus.plan(workload, seed=3)


def test_workload_is_validated(data_dir, tmp_path):
    with pytest.raises(kareus.Error, match="tp"):
        kareus.Workload("qwen3-1.7b", "a100-sxm4-40gb", tp=5)
    with pytest.raises(kareus.Error, match="no-such-gpu"):
        kareus.Workload("qwen3-1.7b", "no-such-gpu")
    with pytest.raises(kareus.Error, match="partial"):
        kareus.Workload("qwen3-1.7b", "a100-sxm4-40gb", recompute="partial")
    path = tmp_path / "workload.json"
    path.write_text(json.dumps({"model": "qwen3-1.7b", "gpu": "a100-sxm4-40gb",
                                "parallelism": {"tp": 2, "pp": 2, "microbatch_size": 2,
                                                "sequence_length": 2048, "microbatches": 4}}))
    w = kareus.Workload.from_file(path)
    assert (w.model, w.gpu, w.total_gpus) == ("qwen3-1.7b", "a100-sxm4-40gb", 4)
    assert len(w.stage_layers) == 2
    assert w.to_dict()["parallelism"]["microbatches"] == 4
    with pytest.raises(kareus.Error, match="missing.json"):
        kareus.Workload.from_file(tmp_path / "missing.json")


def test_plan_frontiers_are_pareto_fastest_first(planned):
    assert planned.methods == ["megatron", "perseus", "nanobatch-perseus", "kareus"]
    for name in planned.methods:
        result = planned[name]
        assert result.method == name
        frontier = result.frontier
        assert frontier, name
        for slower, faster in zip(frontier[1:], frontier):
            assert slower.time_s > faster.time_s
            assert slower.energy_j < faster.energy_j
        assert result.fastest().time_s == frontier[0].time_s
        assert result.min_energy().energy_j == min(p.energy_j for p in frontier)
    assert planned["kareus"].measurements > 0
    with pytest.raises(kareus.Error, match="kareus-exhaustive"):
        planned["kareus-exhaustive"]
    with pytest.raises(kareus.Error, match="warp"):
        planned["warp"]


def test_selection_matches_a_scan_of_the_frontier(planned):
    result = planned["kareus"]
    frontier = result.frontier
    deadline = 0.5 * (frontier[0].time_s + frontier[-1].time_s)
    before = min((p for p in frontier if p.time_s <= deadline), key=lambda p: p.energy_j)
    chosen = result.select(deadline_s=deadline).point
    # The selection polishes its plan at the deadline: never costlier than the frontier's best,
    # which stays as planned.
    assert chosen.time_s <= deadline and chosen.energy_j <= before.energy_j
    assert [(p.time_s, p.energy_j) for p in result.frontier] == [
        (p.time_s, p.energy_j) for p in frontier]

    budget = 0.5 * (frontier[0].energy_j + frontier[-1].energy_j)
    before = min((p for p in frontier if p.energy_j <= budget), key=lambda p: p.time_s)
    chosen = result.select(energy_budget_j=budget).point
    assert chosen.energy_j <= budget and chosen.time_s <= before.time_s

    assert result.select().point.time_s == frontier[0].time_s
    with pytest.raises(kareus.Error, match="deadline"):
        result.select(deadline_s=0.5 * frontier[0].time_s)
    with pytest.raises(kareus.Error, match="not both"):
        result.select(deadline_s=deadline, energy_budget_j=budget)


def test_metrics_name_missing_baselines_none(workload, planned):
    metrics = planned.metrics("kareus")
    assert set(metrics) == {"max_throughput_time_reduction", "max_throughput_energy_reduction",
                            "iso_time_energy_reduction", "iso_energy_time_reduction"}
    assert all(isinstance(v, float) for v in metrics.values())
    as_dict = planned.to_dict()
    assert set(as_dict["methods"]) == set(planned.methods)
    kareus_dict = as_dict["methods"]["kareus"]
    assert kareus_dict["frontier_size"] == len(planned["kareus"].frontier)
    assert kareus_dict["max_throughput"]["time_s"] == planned["kareus"].fastest().time_s
    assert kareus_dict["metrics"] == metrics
    alone = kareus.plan(workload, methods=["kareus"], seed=3)
    assert all(v is None for v in alone.metrics("kareus").values())
    with pytest.raises(kareus.Error, match="at least one method"):
        kareus.plan(workload, methods=[])
    with pytest.raises(kareus.Error, match="noise_sigma") as caught:
        kareus.plan(workload, methods=["megatron"], noise_sigma=0.9)
    assert caught.value.kind == "invalid input"
    assert not isinstance(caught.value, (kareus.IoError, kareus.DeviceError))


def test_a_store_that_cannot_be_created_is_an_io_error(workload):
    with pytest.raises(kareus.IoError, match="measurement store") as caught:
        kareus.plan(workload, methods=["megatron"], store="/proc/kareus-no-such-folder/m.sqlite")
    assert caught.value.kind == "I/O error"


def test_store_errors_name_the_keyword_not_a_flag(workload, tmp_path):
    garbage = tmp_path / "m.sqlite"
    garbage.write_text("not a database\n" * 512)
    with pytest.raises(kareus.IoError, match=r"move it away or pass another store\)") as caught:
        kareus.plan(workload, methods=["megatron"], store=garbage)
    assert "--" not in str(caught.value)


def test_store_makes_a_second_plan_reuse_measurements(workload, tmp_path):
    first = kareus.plan(workload, methods=["kareus"], seed=3, store=tmp_path / "m.sqlite")
    second = kareus.plan(workload, methods=["kareus"], seed=3, store=tmp_path / "m.sqlite")
    assert first["kareus"].measurements_reused == 0
    assert second["kareus"].measurements_reused == second["kareus"].measurements > 0
    assert [p.energy_j for p in second["kareus"].frontier] == [
        p.energy_j for p in first["kareus"].frontier]


def test_schedule_of_a_point_round_trips(workload, planned, tmp_path):
    selected = planned["kareus"].select(deadline_s=planned["kareus"].frontier[-1].time_s)
    point = selected.point
    schedule = planned.schedule(selected)
    assert schedule.method == "kareus"
    assert schedule.predicted_iteration_time_s == point.time_s
    assert schedule.predicted_energy_j == point.energy_j
    assert [s.stage for s in schedule.stages] == [0, 1]
    for stage in schedule.stages:
        directions = [i.direction for i in stage.instructions]
        assert directions.count("forward") == directions.count("backward") == 4
    assert kareus.parse_schedule(schedule.to_json()) == schedule
    schedule.save(tmp_path / "plan.json")
    assert kareus.load_schedule(tmp_path / "plan.json") == schedule


def test_fixture_schedule_fields(schedule_path):
    schedule = kareus.load_schedule(schedule_path)
    assert (schedule.method, schedule.gpu) == ("kareus", "NVIDIA A100-SXM4-40GB")
    assert schedule.predicted_iteration_time_s == 2.75
    assert schedule.workload["parallelism"]["microbatches"] == 3
    b0 = schedule.stages[0].instructions[2]
    assert (b0.microbatch, b0.direction, b0.clock_mhz) == (0, "backward", 900)
    assert b0.partitions["bwd_attn"].slot == "rope_0"
    assert b0.partitions["bwd_attn"].sms == 30
    assert b0.recompute_partitions["fwd_attn"].sms == 21


def test_bad_schedules_name_the_source_and_field(tmp_path):
    with pytest.raises(kareus.Error, match="nowhere.json"):
        kareus.load_schedule(tmp_path / "nowhere.json")
    with pytest.raises(kareus.Error, match=r"inline: /stages"):
        kareus.parse_schedule(json.dumps({"format_version": 1, "workload": {}, "method": "kareus",
                                          "gpu": "x", "predicted": {"iteration_time_s": 1,
                                                                    "energy_j": 1,
                                                                    "dynamic_energy_j": 1}}),
                              "inline")


def play(controller, document, stage, iterations):
    for _ in range(iterations):
        for microbatch, direction in stage_order(document, stage):
            controller.on_instruction_begin(stage, microbatch, direction)
        controller.on_step_end()


def test_controller_leaves_the_schedule_clocks_in_nvml(schedule_path, schedule_document,
                                                       nvml_log):
    schedule = kareus.load_schedule(schedule_path)
    with kareus.FrequencyController(schedule, 0, gpu=0) as controller:
        play(controller, schedule_document, 0, 2)
        controller.wait_until_applied()
        stats = controller.stats
    assert nvml_log.lines() == expected_setters(schedule_document, 0, 2) + [reset_line()]
    assert (stats.instructions, stats.clock_changes, stats.skipped) == (12, 10, 2)


def test_planned_schedule_runs_on_the_fake_a100(planned, nvml_log):
    schedule = planned.schedule("kareus", planned["kareus"].min_energy())
    with kareus.FrequencyController(schedule, 1) as controller:
        play(controller, json.loads(schedule.to_json()), 1, 1)
        controller.wait_until_applied()
    document = json.loads(schedule.to_json())
    assert nvml_log.lines() == expected_setters(document, 1, 1) + [reset_line()]


def test_controller_refuses_divergence_and_calls_after_restore(schedule_path, nvml_log):
    schedule = kareus.load_schedule(schedule_path)
    controller = kareus.FrequencyController(schedule, 1)
    with pytest.raises(kareus.Error, match="backward"):
        controller.on_instruction_begin(1, 1, "backward")
    controller.on_instruction_begin(1, 0, "forward")
    controller.wait_until_applied()
    with pytest.raises(kareus.Error, match="ended after 1 of its 6 instructions"):
        controller.on_step_end()
    controller.restore_default_clocks()
    with pytest.raises(kareus.Error, match="default clocks restored"):
        controller.on_instruction_begin(1, 0, "backward")
    del controller
    assert nvml_log.lines() == ["nvmlDeviceSetGpuLockedClocks 0 1200 1200", reset_line()]
    with pytest.raises(kareus.Error, match="stage"):
        kareus.FrequencyController(schedule, 2)


def test_sigint_resets_the_clocks_and_still_interrupts_python(schedule_path, nvml_log, capfd):
    controller = kareus.FrequencyController(kareus.load_schedule(schedule_path), 0)
    controller.on_instruction_begin(0, 0, "forward")
    controller.wait_until_applied()
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the interrupt ends this early
    assert nvml_log.lines() == ["nvmlDeviceSetGpuLockedClocks 0 930 930", reset_line()]
    # A program that goes on after the interrupt is followed, at the GPU's default clocks.
    controller.on_instruction_begin(0, 1, "forward")
    controller.on_instruction_begin(0, 0, "backward")  # 900 MHz in the schedule
    controller.wait_until_applied()
    assert nvml_log.lines() == ["nvmlDeviceSetGpuLockedClocks 0 930 930", reset_line()]
    assert "SIGINT reset the clocks of stage 0" in capfd.readouterr().err


def test_missing_nvml_is_an_nvml_error(schedule_path, monkeypatch):
    monkeypatch.setenv("KAREUS_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    with pytest.raises(kareus.NvmlError, match="NVML unavailable") as caught:
        kareus.FrequencyController(kareus.load_schedule(schedule_path), 0)
    assert isinstance(caught.value, kareus.DeviceError)
    assert isinstance(caught.value, kareus.Error)
    assert caught.value.kind == "device error"
    assert isinstance(caught.value.code, int)
    with pytest.raises(kareus.NvmlError):
        kareus.EnergyMonitor([0])


def test_monitor_windows_measure_the_fake_gpus_power():
    monitor = kareus.EnergyMonitor([0, 1])
    monitor.begin_window("outer")
    monitor.begin_window("inner")
    with pytest.raises(kareus.Error, match="inner"):
        monitor.begin_window("inner")
    time.sleep(0.06)
    inner = monitor.end_window("inner")
    outer = monitor.end_window("outer")
    with pytest.raises(kareus.Error, match="inner"):
        monitor.end_window("inner")
    assert inner.gpus == [0, 1]
    assert inner.time_s >= 0.06 and outer.time_s > inner.time_s
    assert sum(inner.gpu_energy_j) == pytest.approx(inner.total_energy_j)
    # two_gpus.json draws idle_w + w_per_mhz x clock at the default clocks:
    # 52 + 0.25 x 1410 = 404.5 W and 22 + 0.15 x 1665 = 271.75 W.
    assert inner.gpu_energy_j[0] / inner.time_s == pytest.approx(404.5, rel=0.05)
    assert inner.gpu_energy_j[1] / inner.time_s == pytest.approx(271.75, rel=0.05)
    assert not monitor.integrates_power(0)


def test_a_calibrated_gpu_file_is_found_by_path_and_in_the_users_catalogue(data_dir, tmp_path,
                                                                          monkeypatch):
    """A workload's GPU may be a GPU file (kareus calibrate writes one) by path, or by its name
    in $XDG_CONFIG_HOME/kareus/gpus; plans on it differ from the catalogue's."""
    catalogue_dir = os.environ.get("KAREUS_DATA_DIR", str(data_dir.parent.parent / "data"))
    gpu = json.loads((pathlib.Path(catalogue_dir) / "gpus" / "a100-sxm4-40gb.json").read_text())
    gpu["name"] = "a100-sxm4-40gb@slower"
    gpu["gemm_mma_efficiency"]["value"] = 0.8
    folder = tmp_path / "config" / "kareus" / "gpus"
    folder.mkdir(parents=True)
    (folder / "mine.json").write_text(json.dumps(gpu))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    shape = dict(tp=2, pp=2, microbatches=4, microbatch_size=2)
    by_name = kareus.plan(kareus.Workload("qwen3-1.7b", "a100-sxm4-40gb@slower", **shape),
                          methods=["perseus"])
    by_path = kareus.plan(kareus.Workload("qwen3-1.7b", str(folder / "mine.json"), **shape),
                          methods=["perseus"])
    catalogue = kareus.plan(kareus.Workload("qwen3-1.7b", "a100-sxm4-40gb", **shape),
                            methods=["perseus"])
    fastest = [p["perseus"].fastest().time_s for p in (by_name, by_path, catalogue)]
    assert fastest[0] == fastest[1] > fastest[2]
