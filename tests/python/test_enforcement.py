# SPDX-License-Identifier: Apache-2.0
"""What kareus.torch checks before touching a clock, how it maps devices, and how it refuses what
it cannot apply: job shape and GPU model, CUDA_VISIBLE_DEVICES (indices, permutations, UUIDs),
ignored signals, queued clocks at a normal block end, whole-stage reentrant checkpointing,
decisions beyond clocks, partition-granularity clocks, signals the program handles itself. All
against the fake NVML."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.utils.checkpoint

import kareus
import kareus.torch
from schedule_log import expected_setters, reset_line, stage_order


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))


def with_step_clocks(document):
    """`document` as a partition-granularity schedule: forward 0 of stage 0 changes clock inside."""
    document = json.loads(json.dumps(document))
    document["stages"][0]["instructions"][0]["step_clocks_mhz"] = [930, 1200, 990]
    return kareus.parse_schedule(json.dumps(document), "steps.json")


@pytest.mark.parametrize("options, message", [
    ({"microbatches": 8}, "3 microbatch(es) per iteration, the job 8"),
    ({"pipeline_stages": 4}, "2 pipeline stage(s), the job runs 4"),
    ({"nvml_gpu": 1}, "this GPU is NVIDIA GeForce RTX 3080 Ti"),
])
def test_a_schedule_that_does_not_fit_the_job_touches_no_clock(clocks_schedule_path, nvml_log,
                                                              options, message):
    with pytest.raises(kareus.Error) as caught:
        kareus.torch.PipelineStage(make_model(), clocks_schedule_path, stage=0, **options)
    assert message in str(caught.value)
    assert nvml_log.lines() == []


def test_every_mismatch_is_in_one_message(clocks_schedule_path, nvml_log):
    with pytest.raises(kareus.Error) as caught:
        kareus.FrequencyController(kareus.load_schedule(clocks_schedule_path), 0, gpu=1,
                                   microbatches=4, pipeline_stages=2)
    text = str(caught.value)
    assert "microbatch(es)" in text and "RTX 3080 Ti" in text and "no clock was changed" in text
    assert "pipeline stage" not in text  # 2 stages is right
    assert nvml_log.lines() == []


def test_the_whole_job_is_checked_in_one_message(clocks_schedule_path, nvml_log):
    with pytest.raises(kareus.Error) as caught:
        kareus.torch.PipelineStage(make_model(), clocks_schedule_path, stage=0, nvml_gpu=1,
                                   tp=4, cp=2, dp=2, model="qwen3-1.7b", recompute="none",
                                   microbatches=8, pipeline_stages=4)
    text = str(caught.value)
    for phrase in ["model llama3.2-3b, the job's is qwen3-1.7b",
                   "tensor-parallel size 8, the job runs 4", "context-parallel size 1",
                   "data-parallel size 1", "recompute mode full, the job's is none",
                   "3 microbatch(es) per iteration, the job 8",
                   "2 pipeline stage(s), the job runs 4", "RTX 3080 Ti"]:
        assert phrase in text, phrase
    assert nvml_log.lines() == []
    with kareus.torch.PipelineStage(make_model(), clocks_schedule_path, stage=0, tp=8, cp=1,
                                    dp=1, model="llama3.2-3b", recompute="full",
                                    measure_energy=False):
        pass


def test_interleaved_1f1b_is_refused_by_name(clocks_schedule_path, nvml_log):
    chunks = [make_model(), make_model()]  # Megatron's model list under a virtual pipeline
    for options in ({"module": chunks}, {"module": make_model(), "virtual_pipeline_stages": 2}):
        with pytest.raises(kareus.Error, match=r"interleaved \(virtual-pipeline\) 1F1B with 2"):
            kareus.torch.PipelineStage(schedule=clocks_schedule_path, stage=0, **options)
    assert nvml_log.lines() == []


def test_stage_for_rank(clocks_schedule_path):
    assert kareus.torch.stage_for_rank(clocks_schedule_path, 1, pipeline_size=2) == 1
    with pytest.raises(kareus.Error, match="stages 0..1"):
        kareus.torch.stage_for_rank(clocks_schedule_path, 2)
    with pytest.raises(kareus.Error, match="job runs 4"):
        kareus.torch.stage_for_rank(clocks_schedule_path, 0, pipeline_size=4)


@pytest.mark.parametrize("visible, cuda, nvml", [
    (None, 1, 1), ("1,0", 0, 1), ("1,0", 1, 0), ("1", 0, 1),
    ("GPU-fake-1,GPU-fake-0", 0, 1), ("GPU-fake-0", 0, 0), ("fake-1", 0, 1),
])
def test_cuda_devices_map_to_nvml(monkeypatch, visible, cuda, nvml):
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert kareus.nvml_index_of_cuda_device(cuda) == nvml
    assert kareus.torch.nvml_gpu_of(f"cuda:{cuda}") == nvml


def test_pipeline_stage_gpu_is_a_cuda_index(clocks_schedule_path, nvml_log, monkeypatch):
    # CUDA device 0 of this rank is NVML device 1 (the RTX 3080 Ti): the A100 schedule is refused
    # before a clock changes, which shows the mapping reached the controller.
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-fake-1,GPU-fake-0")
    with pytest.raises(kareus.Error, match="RTX 3080 Ti"):
        kareus.torch.PipelineStage(make_model(), clocks_schedule_path, stage=0, gpu=0)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,0")
    with kareus.torch.PipelineStage(make_model(), clocks_schedule_path, stage=0, gpu=1,
                                    measure_energy=False) as stage:
        assert stage.gpu == 0
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    with pytest.raises(kareus.Error, match="CUDA_VISIBLE_DEVICES"):
        kareus.torch.PipelineStage(make_model(), clocks_schedule_path, stage=0, gpu=1)
    assert nvml_log.lines() == []


def test_controller_block_applies_queued_clocks_at_a_normal_end(clocks_schedule_path,
                                                                 schedule_document, nvml_log):
    schedule = kareus.load_schedule(clocks_schedule_path)
    with kareus.FrequencyController(schedule, 0) as controller:
        for microbatch, direction in stage_order(schedule_document, 0):
            controller.on_instruction_begin(0, microbatch, direction)
        # No wait_until_applied(): leaving the block must not drop what is queued.
    assert nvml_log.lines() == expected_setters(schedule_document, 0, 1) + [reset_line()]


def test_clocks_land_when_the_gpu_reaches_their_instruction(clocks_schedule_path,
                                                              schedule_document, nvml_log,
                                                              monkeypatch):
    """Markers on a CUDA stream (the stand-in libcuda runs each after a 50 ms kernel): the host
    is through the whole iteration before the first clock lands."""
    monkeypatch.setenv("KAREUS_CUDA_LIBRARY", os.environ["KAREUS_FAKE_CUDA_LIBRARY"])
    monkeypatch.setenv("KAREUS_FAKE_CUDA_KERNEL_MS", "50")
    schedule = kareus.load_schedule(clocks_schedule_path)
    with kareus.FrequencyController(schedule, 0, cuda_stream=0x1234) as controller:
        for microbatch, direction in stage_order(schedule_document, 0):
            controller.on_instruction_begin(0, microbatch, direction)
        assert nvml_log.lines() == []
        controller.wait_until_applied()
        stats = controller.stats
    assert nvml_log.lines() == expected_setters(schedule_document, 0, 1) + [reset_line()]
    assert stats.applied == 5
    assert stats.max_lead_s >= 0.2  # the last change waited for five 50 ms kernels
    assert 0 <= stats.mean_lateness_s <= stats.max_lateness_s < 0.05
    with pytest.raises(kareus.DeviceError, match="CUDA_ERROR_INVALID_HANDLE"):
        with kareus.FrequencyController(schedule, 0, cuda_stream=0xdead) as controller:
            controller.on_instruction_begin(0, 0, "forward")


def run_python(code, nvml_log, preexec=None):
    env = dict(os.environ, KAREUS_FAKE_NVML_LOG=str(nvml_log.path))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=60, preexec_fn=preexec)


@pytest.mark.parametrize("how", ["python", "inherited"])
def test_an_ignored_sigint_stays_ignored(clocks_schedule_path, nvml_log, how):
    ignore = "signal.signal(signal.SIGINT, signal.SIG_IGN)" if how == "python" else "pass"
    code = f"""
        import os, signal, time, kareus
        {ignore}
        c = kareus.FrequencyController(kareus.load_schedule({str(clocks_schedule_path)!r}), 0)
        c.on_instruction_begin(0, 0, "forward")
        c.wait_until_applied()
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.3)
        c.on_instruction_begin(0, 1, "forward")
        c.on_instruction_begin(0, 0, "backward")
        c.wait_until_applied()
        print("alive")
    """
    import signal
    preexec = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if how == "inherited" else None
    result = run_python(code, nvml_log, preexec)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "alive"
    # 930 930 (kept) 900, then the reset at exit: never a reset in between.
    assert nvml_log.lines() == ["nvmlDeviceSetGpuLockedClocks 0 930 930",
                                "nvmlDeviceSetGpuLockedClocks 0 900 900", reset_line()]


def test_a_programs_handler_runs_after_the_reset_and_the_job_goes_on(clocks_schedule_path,
                                                                     nvml_log):
    """Megatron's exit signal handler: SIGTERM sets a flag, the iteration finishes, the job saves
    a checkpoint and exits. The clocks are reset at the signal (a SIGKILL after the grace period
    would leave them locked otherwise), and the rest of the iteration is accepted at the GPU's
    default clocks."""
    code = f"""
        import os, signal, time, torch, kareus.torch
        seen = []
        signal.signal(signal.SIGTERM, lambda *a: seen.append(a))
        model = torch.nn.Linear(4, 1)
        with kareus.torch.PipelineStage(model, {str(clocks_schedule_path)!r}, stage=1,
                                        measure_energy=False) as ks:
            loss = model(torch.ones(2, 4)).sum()
            ks.controller.wait_until_applied()
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.3)
            loss.backward()
            for m in (1, 2):
                model(torch.ones(2, 4)).sum().backward()
            ks.step()
        print(len(seen))
    """
    result = run_python(code, nvml_log)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"
    # Stage 1 runs F0 and B0 at 1200 MHz: one setter, the reset at the signal, nothing after.
    assert nvml_log.lines() == ["nvmlDeviceSetGpuLockedClocks 0 1200 1200", reset_line()]
    assert result.stderr.count("SIGTERM reset the clocks of stage 1") == 1, result.stderr


def test_a_handled_signal_does_not_leave_the_others_to_the_program(clocks_schedule_path,
                                                                   nvml_log):
    """A trainer handles SIGINT itself; SIGTERM must still reset the clocks before it ends the
    process."""
    code = f"""
        import os, signal, time, torch, kareus.torch
        signal.signal(signal.SIGINT, lambda *a: None)
        model = torch.nn.Linear(4, 1)
        ks = kareus.torch.PipelineStage(model, {str(clocks_schedule_path)!r}, stage=1,
                                        measure_energy=False)
        model(torch.ones(2, 4)).sum()
        ks.controller.wait_until_applied()
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    """
    result = run_python(code, nvml_log)
    assert result.returncode == -15, result.stderr
    assert nvml_log.lines() == ["nvmlDeviceSetGpuLockedClocks 0 1200 1200", reset_line()]


def test_a_handler_installed_afterwards_is_reported_once(clocks_schedule_path, nvml_log):
    code = f"""
        import signal, torch, kareus.torch
        model = torch.nn.Linear(4, 1)
        with kareus.torch.PipelineStage(model, {str(clocks_schedule_path)!r}, stage=1,
                                        measure_energy=False) as ks:
            signal.signal(signal.SIGTERM, lambda *a: None)
            for iteration in range(2):
                for m in range(3):
                    model(torch.ones(2, 4)).sum().backward()
                ks.step()
    """
    result = run_python(code, nvml_log)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("the program replaced Kareus's SIGTERM handler") == 1, \
        result.stderr


def test_a_stage_wrapped_whole_in_reentrant_checkpointing_is_refused(clocks_schedule_path,
                                                                     nvml_log):
    model = make_model()
    with kareus.torch.PipelineStage(model, clocks_schedule_path, stage=0,
                                    measure_energy=False):
        x = torch.randn(4, 8, requires_grad=True)
        with pytest.raises(kareus.Error, match="reentrant"):
            torch.utils.checkpoint.checkpoint(model, x, use_reentrant=True)
    assert nvml_log.lines() == []


def test_decisions_beyond_clocks_are_refused_by_default(schedule_path, nvml_log):
    with pytest.raises(kareus.Error) as caught:
        kareus.torch.PipelineStage(make_model(), schedule_path, stage=0)
    text = str(caught.value)
    for phrase in ["nanobatch execution of 6 of 6", "communication SM counts", "launch slots",
                   "allow_partial=True", "--enforceable clocks"]:
        assert phrase in text, phrase
    assert nvml_log.lines() == []


def test_allow_partial_runs_clocks_only_and_names_what_is_ignored(schedule_path,
                                                                  schedule_document, nvml_log):
    model = make_model()
    with pytest.warns(RuntimeWarning, match="ignored: nanobatch execution") as warned:
        stage = kareus.torch.PipelineStage(model, schedule_path, stage=1, allow_partial=True,
                                           measure_energy=False)
    assert "launch slots" in str(warned[0].message)
    with stage:
        losses = {}
        for microbatch, direction in stage_order(schedule_document, 1):
            if direction == "forward":
                losses[microbatch] = model(torch.ones(2, 8)).sum()
            else:
                losses.pop(microbatch).backward()
        stage.step()
    assert nvml_log.lines() == expected_setters(schedule_document, 1, 1) + [reset_line()]


def test_step_clocks_are_applied_or_refused(schedule_document, nvml_log):
    schedule = with_step_clocks(schedule_document)
    assert schedule.stages[0].instructions[0].step_clocks_mhz == [930, 1200, 990]
    with pytest.raises(kareus.Error, match="step_clocks_mhz"):
        kareus.FrequencyController(schedule, 0)
    with pytest.raises(kareus.Error, match="partition-granularity clocks"):
        kareus.torch.PipelineStage(make_model(), schedule, stage=0)
    assert nvml_log.lines() == []
    with kareus.FrequencyController(schedule, 0, partition_clocks=True) as controller:
        controller.on_instruction_begin(0, 0, "forward")
        for step in range(3):
            controller.on_instruction_step(step)
        with pytest.raises(kareus.Error, match="steps 0..2"):
            controller.on_instruction_step(3)
    assert nvml_log.lines() == ["nvmlDeviceSetGpuLockedClocks 0 930 930",
                                "nvmlDeviceSetGpuLockedClocks 0 1200 1200",
                                "nvmlDeviceSetGpuLockedClocks 0 990 990", reset_line()]


def test_memory_clock_locked_for_the_job(clocks_schedule_path, schedule_document, nvml_log):
    model = make_model()
    with kareus.torch.PipelineStage(model, clocks_schedule_path, stage=1, lock_memory_clock=True,
                                    measure_energy=False) as stage:
        assert nvml_log.lines() == ["nvmlDeviceSetMemoryLockedClocks 0 1215 1215"]
        model(torch.ones(2, 8)).sum().backward()
        stage.controller.wait_until_applied()
    assert nvml_log.lines() == ["nvmlDeviceSetMemoryLockedClocks 0 1215 1215",
                                "nvmlDeviceSetGpuLockedClocks 0 1200 1200",
                                "nvmlDeviceResetMemoryLockedClocks 0", reset_line()]
