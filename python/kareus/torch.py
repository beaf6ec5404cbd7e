# SPDX-License-Identifier: Apache-2.0
"""PyTorch integration: a pipeline stage's clocks set at each forward and backward, its energy
measured per training iteration (docs/python.md).

    schedule = kareus.load_schedule("schedule.json")
    with kareus.torch.PipelineStage(stage_module, schedule, stage=pp_rank, gpu=local_rank) as ks:
        for batch in loader:
            ...  # this stage's forwards and backwards, in the schedule's 1F1B order
            optimizer.step()
            ks.step()  # end of the iteration
    # The GPU's default clocks are back here, after an exception too.

Hooks on `stage_module` call the frequency controller before each forward (a forward pre-hook)
and at the start of each backward (a gradient hook on the forward's output, which autograd calls
before anything else of that backward runs). Forwards are numbered in call order within an
iteration; a backward belongs to the forward whose output it differentiates. The controller
checks every call against the schedule, so a loop that diverges from it raises kareus.Error at
the first wrong instruction instead of running at the wrong clocks.
"""

import os
import socket
import sys
import warnings

import torch
import torch.utils.checkpoint

from ._kareus import (EnergyMonitor, Error, FrequencyController, Schedule, load_schedule,
                      nvml_index_of_cuda_device, nvml_index_of_uuid)

__all__ = ["PipelineStage", "decisions_beyond_clocks", "nvml_gpu_of", "stage_for_rank"]

def nvml_gpu_of(cuda_device):
    """The NVML index of CUDA device `cuda_device` (an int, "cuda:N" or torch.device).

    CUDA numbers the devices CUDA_VISIBLE_DEVICES lists, in its order, and Slurm or Kubernetes
    set it per job (often to GPU UUIDs), so `cuda:0` of a rank may be NVML device 5. With CUDA
    available and a torch that reports device UUIDs, the UUID decides; otherwise the
    CUDA_VISIBLE_DEVICES entries (indices, taken in NVML's PCI bus order as with
    CUDA_DEVICE_ORDER=PCI_BUS_ID, or UUIDs / unique UUID prefixes)."""
    index = torch.device(cuda_device).index if not isinstance(cuda_device, int) else cuda_device
    if index is None:
        index = torch.cuda.current_device() if torch.cuda.is_available() else 0
    if torch.cuda.is_available():
        uuid = getattr(torch.cuda.get_device_properties(index), "uuid", None)
        if uuid is not None:
            text = str(uuid)
            return nvml_index_of_uuid(text if text.startswith("GPU-") else "GPU-" + text)
    return nvml_index_of_cuda_device(index)


def stage_for_rank(schedule, pipeline_rank, pipeline_size=None):
    """The schedule stage a pipeline rank runs (Megatron: mpu.get_pipeline_model_parallel_rank()).

    Checks that the rank exists in the schedule and, given the job's pipeline size, that the
    schedule has exactly that many stages, before anything touches a GPU."""
    if not isinstance(schedule, Schedule):
        schedule = load_schedule(os.fspath(schedule))
    stages = len(schedule.stages)
    if pipeline_size is not None and pipeline_size != stages:
        raise Error(f"kareus.torch: the schedule has {stages} pipeline stage(s), the job runs "
                    f"{pipeline_size}")
    if not 0 <= pipeline_rank < stages:
        raise Error(f"kareus.torch: pipeline rank {pipeline_rank} has no stage in the schedule "
                    f"(stages 0..{stages - 1})")
    return pipeline_rank


def decisions_beyond_clocks(schedule, stage):
    """What a stage's schedule decides besides per-instruction SM clocks, one phrase each:
    nanobatch execution, communication SM counts, launch slots, partition-granularity clocks."""
    instructions = schedule.stages[stage].instructions
    nanobatch = [i for i in instructions if i.execution == "nanobatch"]
    found = []
    if nanobatch:
        sms = sorted({p.sms for i in nanobatch
                      for p in list(i.partitions.values()) + list(i.recompute_partitions.values())})
        slots = sorted({p.slot for i in nanobatch
                        for p in list(i.partitions.values()) + list(i.recompute_partitions.values())})
        found.append(f"nanobatch execution of {len(nanobatch)} of {len(instructions)} "
                     "instructions")
        found.append(f"communication SM counts {sms}")
        found.append(f"launch slots {slots}")
    if any(i.step_clocks_mhz for i in instructions):
        found.append("partition-granularity clocks (step_clocks_mhz)")
    return found


def _stream_of(cuda_device):
    """The handle of the current CUDA stream of the stage's device, or None without CUDA."""
    if not torch.cuda.is_available():
        return None
    index = cuda_device if isinstance(cuda_device, int) else torch.device(cuda_device).index
    return torch.cuda.current_stream(index).cuda_stream


def _ranks_sharing_gpu(nvml_gpu):
    """This rank and the other ranks of the job on its GPU (same host, same NVML index), from
    every rank's answer (a collective), or nothing without torch.distributed."""
    import torch.distributed as dist
    if not (dist.is_available() and dist.is_initialized()):
        return {}
    mine = (socket.gethostname(), nvml_gpu)
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, mine)
    rank = dist.get_rank()
    return {"rank": rank,
            "ranks_sharing_gpu": [r for r, where in enumerate(everyone)
                                  if r != rank and tuple(where) == mine]}


def _rank_and_world(rank):
    """(the rank a record names, the job's number of ranks) from torch.distributed."""
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        return (dist.get_rank() if rank is None else rank), dist.get_world_size()
    return (0 if rank is None else rank), 1


def _record_path(record, world):
    """The record file of this rank: "{rank}" is left for the controller to fill; without it, a
    job of several ranks gets ".{rank}" before the suffix so that ranks never share a file."""
    if record is None:
        return None
    path = os.fspath(record)
    if world > 1 and "{rank}" not in path:
        root, suffix = os.path.splitext(path)
        path = root + ".{rank}" + suffix
    return path


def _inside_reentrant_checkpoint():
    """Whether the module is being called from torch.utils.checkpoint's reentrant function
    (CheckpointFunction.forward, under no_grad, or its backward's re-run). Only the few frames
    between that function and the hook are looked at."""
    frame = sys._getframe(2)
    for _ in range(8):
        if frame is None:
            return False
        if frame.f_code in _REENTRANT_CODES:
            return True
        frame = frame.f_back
    return False


_REENTRANT_CODES = {torch.utils.checkpoint.CheckpointFunction.forward.__code__,
                    torch.utils.checkpoint.CheckpointFunction.backward.__code__}


def _tensors(value):
    """The tensors of a forward's output: a tensor, or any nesting of tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


class PipelineStage:
    """Runs one pipeline stage of a training loop under a Kareus schedule.

    module: the stage's torch.nn.Module (its forward is called once per microbatch).
    schedule: a kareus.Schedule or the path of a schedule file.
    stage: this stage's index in the schedule.
    gpu: CUDA device index of the stage's GPU (LOCAL_RANK), mapped to NVML through
        CUDA_VISIBLE_DEVICES / GPU UUIDs (nvml_gpu_of); nvml_gpu: the NVML index instead.
    microbatches, pipeline_stages: the job's microbatches per iteration and pipeline size, checked
        against the schedule (with the GPU model) before any clock changes.
    layers: the stage's kareus.nanobatch.NanobatchTPStack, which executes the schedule's
        nanobatch overlap (execution, launch slots, SM counts). Without it a schedule that
        decides more than clocks is refused, unless allow_partial=True, which runs its clocks
        only and warns naming what is ignored.
    tp, cp, dp, model, recompute: the job's tensor-, context- and data-parallel sizes, model
        (catalogue id) and recompute mode ("full" or "none"), checked against the schedule's
        workload; None leaves one unchecked. virtual_pipeline_stages: Megatron's model chunks per
        pipeline rank; above 1 (interleaved 1F1B) is refused, as is a list of chunks as `module`.
    check_gpu_sharing: with torch.distributed initialized, every rank of the job constructs its
        PipelineStage (a collective) and two ranks on one GPU are refused.
    at_gpu_position: with CUDA, each clock change lands when the GPU reaches its instruction on
        the current stream of the stage's device (a host function on the stream; the training
        loop never waits); False: when the hook runs on the host, which CUDA lets run ahead.
    lock_memory_clock: lock the GPU's memory clock at its maximum for the job, as Zeus does
        (NVML only; restored with the SM clocks).
    daemon_socket: kareusd's socket, for processes without the right to set clocks (None: NVML).
    measure_energy: open an EnergyMonitor window per iteration over `monitor_gpus` (default
        [gpu]); `measurements` holds one kareus.EnergyMeasurement per completed iteration.
    restore_on_signals: reset the clocks on SIGINT, SIGTERM, SIGHUP or SIGQUIT, then hand the
        signal to the program's handler (a signal the program ignores stays ignored).
    record: write a measurement record (docs/measurement-format.md) of every instruction and
        iteration to this file, for `kareus compare --measured` and `kareus calibrate`. With
        torch.distributed and more than one rank, each rank writes its own: "{rank}" in the name
        becomes the rank, or ".<rank>" goes before the suffix ("run.jsonl" -> "run.3.jsonl").
        A forward ends when it returns, a backward when every trainable parameter of the stage
        has its gradient. rank: the rank the record names (default: torch.distributed's, else 0).

    Forwards run under torch.no_grad() (evaluation) are not training instructions and are
    ignored. Activation recomputation inside the module re-runs inner modules only, so it does
    not count as a forward of the stage.
    """

    def __init__(self, module, schedule, stage, *, gpu=0, nvml_gpu=None, daemon_socket=None,
                 measure_energy=True, monitor_gpus=None, restore_on_signals=True,
                 microbatches=0, pipeline_stages=0, tp=None, cp=None, dp=None, model=None,
                 recompute=None, virtual_pipeline_stages=None, check_gpu_sharing=True,
                 layers=None, allow_partial=False, lock_memory_clock=False,
                 at_gpu_position=True, record=None, rank=None):
        if not isinstance(schedule, Schedule):
            schedule = load_schedule(os.fspath(schedule))
        if isinstance(module, (list, tuple, torch.nn.ModuleList)) and len(module) > 1:
            virtual_pipeline_stages = max(virtual_pipeline_stages or 0, len(module))
        stage_for_rank(schedule, stage)  # the pipeline size is checked with the rest below
        self.schedule = schedule
        self.stage = stage
        self.instructions = schedule.stages[stage].instructions
        self.ignored = self._check_enforceable(layers, allow_partial)
        cuda_device = gpu
        gpu = nvml_gpu if nvml_gpu is not None else nvml_gpu_of(gpu)
        self.gpu = gpu
        job = {"tp": tp, "cp": cp, "dp": dp, "model": model, "recompute": recompute,
               "virtual_pipeline_stages": virtual_pipeline_stages}
        if check_gpu_sharing:
            job.update(_ranks_sharing_gpu(gpu))
        rank, world = _rank_and_world(rank)
        self.controller = FrequencyController(
            schedule, stage, gpu=gpu, daemon_socket=daemon_socket,
            restore_on_signals=restore_on_signals, pipeline_stages=pipeline_stages,
            microbatches=microbatches, lock_memory_clock=lock_memory_clock,
            cuda_stream=_stream_of(cuda_device) if at_gpu_position else None, job=job,
            record=_record_path(record, world), rank=rank)
        self.record_path = self.controller.record_path
        self.current_instruction = None
        self._position = 0
        if layers is not None:
            layers.attach(self, allow_partial=allow_partial)
        try:
            self.monitor = (EnergyMonitor(list(monitor_gpus) if monitor_gpus else [gpu])
                            if measure_energy else None)
        except BaseException:
            self.controller.restore_default_clocks()
            raise
        self.measurements = []
        self.iteration = 0
        self._next_forward = 0
        self._window = None
        self._closed = False
        self._hooks = [module.register_forward_pre_hook(self._before_forward),
                       module.register_forward_hook(self._after_forward)]
        # A backward ends when every trainable parameter has its gradient; only a record needs it.
        self._gradients_left = 0
        self._parameters = ([p for p in module.parameters() if p.requires_grad]
                            if self.record_path else [])
        self._hooks += [p.register_hook(self._parameter_gradient) for p in self._parameters]

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close(completed=exc_type is None)

    def step(self):
        """End of a training iteration: every instruction of the stage must have run."""
        self.controller.on_step_end()
        if self._window is not None:
            self.measurements.append(self.monitor.end_window(self._window))
            self._window = None
        self._next_forward = 0
        self._position = 0
        self.current_instruction = None
        self.iteration += 1

    def job_energy(self, group=None):
        """The last iteration's energy summed over the ranks of `group` (default: the whole job)
        and its time (the slowest rank's), next to the schedule's whole-job prediction. Every
        rank calls it (a collective); each must measure its own GPU only, as by default.
        Returns a dict: time_s, energy_j, ranks, predicted_iteration_time_s,
        predicted_energy_j."""
        import torch.distributed as dist
        if not self.measurements:
            raise Error("kareus.torch: job_energy() needs a completed iteration with "
                        "measure_energy on")
        last = self.measurements[-1]
        device = "cpu"
        if dist.get_backend(group) == "nccl":
            device = torch.device("cuda", torch.cuda.current_device())
        energy = torch.tensor([last.total_energy_j], dtype=torch.float64, device=device)
        time_s = torch.tensor([last.time_s], dtype=torch.float64, device=device)
        dist.all_reduce(energy, op=dist.ReduceOp.SUM, group=group)
        dist.all_reduce(time_s, op=dist.ReduceOp.MAX, group=group)
        return {"time_s": time_s.item(), "energy_j": energy.item(),
                "ranks": dist.get_world_size(group),
                "predicted_iteration_time_s": self.schedule.predicted_iteration_time_s,
                "predicted_energy_j": self.schedule.predicted_energy_j}

    def report_job_energy(self, group=None, file=None):
        """job_energy(), printed by rank 0 of `group` as measured vs predicted; returns it."""
        import torch.distributed as dist
        e = self.job_energy(group)
        if dist.get_rank(group) == 0:
            print(f"kareus: iteration {self.iteration - 1}: measured {e['time_s']:.3f} s, "
                  f"{e['energy_j']:.1f} J over {e['ranks']} rank(s); schedule predicts "
                  f"{e['predicted_iteration_time_s']:.3f} s, {e['predicted_energy_j']:.1f} J",
                  file=file or sys.stdout, flush=True)
        return e

    def _check_enforceable(self, layers, allow_partial):
        """Refuses (or, with allow_partial, lists) the decisions this stage cannot apply."""
        decisions = decisions_beyond_clocks(self.schedule, self.stage)
        if layers is not None:
            # The layer stack executes nanobatch overlap; only step clocks remain beyond it.
            decisions = [d for d in decisions if d.startswith("partition-granularity")]
        if not decisions:
            return []
        what = "; ".join(decisions)
        if not allow_partial:
            raise Error(f"kareus.torch: stage {self.stage} of the {self.schedule.method} schedule "
                        f"decides more than clocks ({what}), which this PipelineStage cannot "
                        "apply: pass layers=kareus.nanobatch.NanobatchTPStack(...) to execute "
                        "the overlap, allow_partial=True to run its clocks only (its predicted "
                        "time and energy then do not hold), or plan with `kareus plan "
                        "--enforceable clocks`")
        warnings.warn(f"kareus.torch: running the clocks of stage {self.stage} only; ignored: "
                      f"{what}", RuntimeWarning, stacklevel=3)
        return decisions

    def _advance(self, microbatch, direction):
        self.controller.on_instruction_begin(self.stage, microbatch, direction)
        self.current_instruction = self.instructions[self._position]
        self._position += 1

    def close(self, completed=True):
        """Removes the hooks and restores the default clocks; idempotent. With `completed`, the
        clock changes already queued reach the GPU first, so the run played the whole schedule."""
        if self._closed:
            return
        self._closed = True
        for hook in self._hooks:
            hook.remove()
        try:
            if completed:
                self.controller.wait_until_applied()
        finally:
            self.controller.restore_default_clocks()
            if self._window is not None:
                self.monitor.end_window(self._window)
                self._window = None

    def _before_forward(self, module, inputs):
        if _inside_reentrant_checkpoint():
            raise Error(f"kareus.torch: stage {self.stage}'s module is wrapped whole in reentrant "
                        "activation checkpointing (torch.utils.checkpoint.checkpoint with "
                        "use_reentrant=True): its forward runs under no_grad and again inside "
                        "the backward, so forward clocks would be applied to the backward; "
                        "checkpoint the layers inside the stage module instead")
        if not torch.is_grad_enabled():
            return
        if self.monitor is not None and self._window is None:
            self._window = f"kareus.torch stage {self.stage} iteration {self.iteration}"
            self.monitor.begin_window(self._window)
        self._advance(self._next_forward, "forward")
        self._next_forward += 1

    def _after_forward(self, module, inputs, output):
        if not torch.is_grad_enabled():
            return
        microbatch = self._next_forward - 1
        tensors = [t for t in _tensors(output) if t.requires_grad]
        if not tensors:
            raise Error(f"kareus.torch: stage {self.stage}, microbatch {microbatch}: the forward's "
                        "output has no tensor that requires grad, so its backward cannot be "
                        "followed; run evaluation under torch.no_grad()")
        started = []

        def backward_begins(grad):
            # Several output tensors each get the hook; the first gradient starts the backward.
            if not started:
                started.append(True)
                self._advance(microbatch, "backward")
                self._gradients_left = len(self._parameters)

        for tensor in tensors:
            tensor.register_hook(backward_begins)
        if self.record_path:
            self.controller.on_instruction_end()

    def _parameter_gradient(self, grad):
        if self._gradients_left > 0:
            self._gradients_left -= 1
            if self._gradients_left == 0:
                self.controller.on_instruction_end()
