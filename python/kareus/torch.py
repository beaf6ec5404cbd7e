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

import torch

from ._kareus import EnergyMonitor, Error, FrequencyController, Schedule, load_schedule

__all__ = ["PipelineStage"]


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
    gpu: NVML index of the stage's GPU.
    daemon_socket: kareusd's socket, for processes without the right to set clocks (None: NVML).
    measure_energy: open an EnergyMonitor window per iteration over `monitor_gpus` (default
        [gpu]); `measurements` holds one kareus.EnergyMeasurement per completed iteration.
    restore_on_signals: reset the clocks on SIGINT, SIGTERM, SIGHUP or SIGQUIT before Python sees
        the signal (a signal Python ignores, such as SIGPIPE, stays ignored).

    Forwards run under torch.no_grad() (evaluation) are not training instructions and are
    ignored. Activation recomputation inside the module re-runs inner modules only, so it does
    not count as a forward of the stage.
    """

    def __init__(self, module, schedule, stage, *, gpu=0, daemon_socket=None,
                 measure_energy=True, monitor_gpus=None, restore_on_signals=True):
        if not isinstance(schedule, Schedule):
            schedule = load_schedule(os.fspath(schedule))
        self.stage = stage
        self.controller = FrequencyController(
            schedule, stage, gpu=gpu, daemon_socket=daemon_socket,
            restore_on_signals=restore_on_signals)
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
        self.iteration += 1

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
        if not torch.is_grad_enabled():
            return
        if self.monitor is not None and self._window is None:
            self._window = f"kareus.torch stage {self.stage} iteration {self.iteration}"
            self.monitor.begin_window(self._window)
        self.controller.on_instruction_begin(self.stage, self._next_forward, "forward")
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
                self.controller.on_instruction_begin(self.stage, microbatch, "backward")

        for tensor in tensors:
            tensor.register_hook(backward_begins)
