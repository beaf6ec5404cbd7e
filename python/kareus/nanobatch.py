"""Nanobatch execution of tensor-parallel transformer layers (Kareus §4.1), as a schedule decides.

A Kareus or nanobatch-perseus schedule runs each microbatch as two nanobatches: while one
nanobatch computes a partition (a run of compute ops between two TP collectives), the other
nanobatch's collective runs beside it, launched before the compute op the schedule names (its
launch slot) and on a communicator limited to the schedule's SM count. NanobatchTPStack executes
exactly that for a stack of Megatron-style TP layers, forward and backward (and the forward
re-run under full recomputation), and is numerically the unsplit stack (up to floating-point
reassociation of the two halves).

    layers = [TensorParallelLayer(hidden, heads, ffn, tp_group) for _ in range(n)]
    stack = NanobatchTPStack(layers, tp_group)
    with kareus.torch.PipelineStage(stage_module, "schedule.json", stage=pp_rank,
                                    gpu=local_rank, layers=stack) as ks:
        ...  # stage_module calls stack(x) for its transformer layers

Partitions and launch slots follow the workload model (src/partition/partition.cpp): the ops of
the stack are cut at every collective into segments; a segment holding attention is `attn`, one
holding the MLP is `mlp`, the last (the final residual add forward, the first layer norm's
backward) is `trail`, which runs the fixed norm_0 / 20 SM configuration (kareus-spec §1). Slots
are numbered per op class within a segment: norm_0, norm_1, linear_0, rope_0, rope_1, attn_0,
linear_1 forward in a middle layer's attention segment; backward, dgrad and wgrad of a linear are
two ops (linear_0 then linear_1), as the planner counts them.
"""

import math
import os
import warnings

import torch
import torch.distributed as dist
import torch.nn.functional as F

from ._kareus import Error

__all__ = ["CommunicatorPool", "NanobatchTPStack", "TensorParallelLayer"]

# The trail partition's fixed configuration (kareus-spec §1; kTrailSms in partition.hpp).
TRAIL_SLOT, TRAIL_SMS = "norm_0", 20


class TensorParallelLayer(torch.nn.Module):
    """A pre-norm transformer layer split over a tensor-parallel group as Megatron-LM splits it
    (without sequence parallelism): column-parallel QKV and fc1, row-parallel output projection
    and fc2 each followed by an AllReduce, this rank's heads of causal rotary attention, GELU MLP.

    The full weights come from `seed`, and each rank keeps its slice, so a layer built with
    tp_size=1 holds all of them: the same function on one rank."""

    def __init__(self, hidden, heads, ffn, tp_size=1, tp_rank=0, *, seed=0, dtype=torch.float32,
                 device=None):
        super().__init__()
        if heads % tp_size or ffn % tp_size or hidden % heads:
            raise Error(f"TensorParallelLayer: heads ({heads}) and ffn ({ffn}) must divide by "
                        f"tp_size ({tp_size}) and hidden ({hidden}) by heads")
        self.hidden, self.heads, self.ffn, self.tp_size = hidden, heads, ffn, tp_size
        self.local_heads, self.head_dim = heads // tp_size, hidden // heads
        g = torch.Generator().manual_seed(seed)

        def full(*shape, scale):
            return torch.randn(*shape, generator=g, dtype=torch.float64) * scale

        qkv = full(3, heads, self.head_dim, hidden, scale=hidden ** -0.5)
        qkv_b = full(3, heads, self.head_dim, scale=0.02)
        out = full(hidden, heads, self.head_dim, scale=hidden ** -0.5)
        fc1, fc1_b = full(ffn, hidden, scale=hidden ** -0.5), full(ffn, scale=0.02)
        fc2 = full(hidden, ffn, scale=ffn ** -0.5)
        h0, h1 = tp_rank * self.local_heads, (tp_rank + 1) * self.local_heads
        f0, f1 = tp_rank * ffn // tp_size, (tp_rank + 1) * ffn // tp_size

        def param(t):
            return torch.nn.Parameter(t.to(dtype=dtype, device=device).contiguous())

        self.ln1_weight = param(1 + full(hidden, scale=0.1))
        self.ln1_bias = param(full(hidden, scale=0.1))
        self.qkv_weight = param(qkv[:, h0:h1].reshape(-1, hidden))
        self.qkv_bias = param(qkv_b[:, h0:h1].reshape(-1))
        self.out_weight = param(out[:, h0:h1].reshape(hidden, -1))
        self.out_bias = param(full(hidden, scale=0.02))  # replicated, added after the reduce
        self.ln2_weight = param(1 + full(hidden, scale=0.1))
        self.ln2_bias = param(full(hidden, scale=0.1))
        self.fc1_weight = param(fc1[f0:f1])
        self.fc1_bias = param(fc1_b[f0:f1])
        self.fc2_weight = param(fc2[:, f0:f1])
        self.fc2_bias = param(full(hidden, scale=0.02))  # replicated, added after the reduce

    def rotary(self, qkv):
        """Rotary embedding of the queries and keys of qkv [batch, seq, 3, heads, head_dim]."""
        seq, d = qkv.shape[1], self.head_dim
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
        angles = torch.outer(torch.arange(seq, dtype=torch.float64), inv)
        cos = angles.cos().to(qkv)[None, :, None, :]
        sin = angles.sin().to(qkv)[None, :, None, :]

        def rotate(t):
            a, b = t[..., : d // 2], t[..., d // 2:]
            return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)

        return torch.stack([rotate(qkv[:, :, 0]), rotate(qkv[:, :, 1]), qkv[:, :, 2]], dim=2)

    def attention(self, qkv):
        q, k, v = (t.transpose(1, 2) for t in qkv.unbind(2))  # [batch, heads, seq, head_dim]
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        seq = scores.shape[-1]
        causal = torch.ones(seq, seq, dtype=torch.bool, device=scores.device).triu(1)
        probs = scores.masked_fill(causal, float("-inf")).softmax(-1)
        return (probs @ v).transpose(1, 2).flatten(2)


class _Op:
    """One compute op: `kind` is its launch-slot class (norm, linear, rope, attn, activation)."""

    def __init__(self, kind, fn, inputs, output, params=(), linear=False, mlp=False):
        self.kind, self.fn, self.inputs, self.output = kind, fn, inputs, output
        self.params, self.linear, self.mlp = list(params), linear, mlp


class _Segment:
    """Compute ops between two collectives; `collective` = (name it reduces, name of the
    result), None for the last. Slot names are counted per class, as partition.cpp does."""

    def __init__(self, ops, collective):
        self.ops, self.collective = ops, collective
        counters, self.slots = {}, []
        for op in ops:
            n = counters.get(op.kind, 0)
            counters[op.kind] = n + 1
            self.slots.append(f"{op.kind}_{n}")
        mlp = any(op.mlp for op in ops)
        self.name = "mlp" if mlp else "attn" if any(op.kind == "attn" for op in ops) else "trail"


def _identity(t):
    return t.view_as(t)


def _forward_program(layers):
    """The stack's forward as segments; value names carry the layer index."""
    segments, ops = [], []

    def op(kind, fn, inputs, output, params=(), linear=False, mlp=False):
        ops.append(_Op(kind, fn, inputs, output, params, linear, mlp))

    def cut(collective):
        segments.append(_Segment(list(ops), collective))
        ops.clear()

    previous = None
    for i, L in enumerate(layers):
        h = f"h{i}"
        if previous is not None:
            op("norm", lambda y, m, b: y + m + b, [f"y{i - 1}", f"mr{i - 1}"], h,
               [previous.fc2_bias])
        else:
            # Where a middle layer's segment starts with the previous residual add: an empty op,
            # so every attention segment has a middle layer's slots (norm_0, norm_1, ...), the
            # numbering of the planner's representative partition.
            op("norm", _identity, ["x"], h)
        op("norm", lambda t, w, b, L=L: F.layer_norm(t, (L.hidden,), w, b), [h], f"a{i}",
           [L.ln1_weight, L.ln1_bias])
        op("linear", F.linear, [f"a{i}"], f"qkv{i}", [L.qkv_weight, L.qkv_bias], linear=True)
        op("rope", lambda t, L=L: t.unflatten(-1, (3, L.local_heads, L.head_dim)),
           [f"qkv{i}"], f"qs{i}")
        op("rope", lambda t, L=L: L.rotary(t), [f"qs{i}"], f"qr{i}")
        op("attn", lambda t, L=L: L.attention(t), [f"qr{i}"], f"c{i}")
        op("linear", F.linear, [f"c{i}"], f"o{i}", [L.out_weight], linear=True)
        cut((f"o{i}", f"or{i}"))
        op("norm", lambda t, r, b: t + r + b, [h, f"or{i}"], f"y{i}", [L.out_bias])
        op("norm", lambda t, w, b, L=L: F.layer_norm(t, (L.hidden,), w, b), [f"y{i}"], f"b{i}",
           [L.ln2_weight, L.ln2_bias])
        op("linear", F.linear, [f"b{i}"], f"f{i}", [L.fc1_weight, L.fc1_bias], linear=True,
           mlp=True)
        op("activation", F.gelu, [f"f{i}"], f"g{i}")
        op("linear", F.linear, [f"g{i}"], f"m{i}", [L.fc2_weight], linear=True, mlp=True)
        cut((f"m{i}", f"mr{i}"))
        previous = L
    last = len(layers) - 1
    op("norm", lambda y, m, b: y + m + b, [f"y{last}", f"mr{last}"], "z", [previous.fc2_bias])
    # The same for the backward: the first MLP segment has a middle layer's norm_0 and norm_1.
    op("norm", _identity, ["z"], "out")
    cut(None)
    # Inputs of column-parallel linears: identity forward, AllReduce of their gradient backward.
    tp_inputs = {f"a{i}" for i in range(len(layers))} | {f"b{i}" for i in range(len(layers))}
    return segments, tp_inputs


class _BackwardOp:
    """The backward of a forward op (or of its dgrad or wgrad half, for a linear)."""

    def __init__(self, op, part):
        self.op, self.part, self.kind = op, part, op.kind
        self.linear, self.mlp = op.linear, op.mlp


def _backward_program(segments, tp_inputs):
    """Reverse-order backward ops, cut after the wgrad of each column-parallel linear, whose
    input gradient is then AllReduced (Megatron's copy-to-tensor-parallel-region backward)."""
    out, ops = [], []
    for segment in reversed(segments):
        for op in reversed(segment.ops):
            if op.linear:
                ops += [_BackwardOp(op, "dgrad"), _BackwardOp(op, "wgrad")]
                if op.inputs[0] in tp_inputs:
                    out.append(_Segment(list(ops), (op.inputs[0], op.inputs[0])))
                    ops.clear()
            else:
                ops.append(_BackwardOp(op, "all"))
    out.append(_Segment(list(ops), None))
    return out


class _Pending:
    """An async collective's result; the first reader waits for it."""

    def __init__(self, work, tensor):
        self.work, self.tensor = work, tensor


def _get(store, name):
    value = store[name]
    if isinstance(value, _Pending):
        value.work.wait()
        store[name] = value = value.tensor
    return value


class CommunicatorPool:
    """One communicator per SM count the schedule gives a collective, over the TP ranks.

    Every rank creates every group in the same order (torch.distributed requires it), for each
    TP group of the job, keeping those it belongs to. The SM limit is set where the running
    torch and backend can:
      - NCCL, torch exposing ProcessGroupNCCL.Options().config (torch >= 2.1 built with
        NCCL >= 2.17): min_ctas = max_ctas = SM count per communicator; NCCL runs one CTA per SM
        (one per channel). NCCL_MIN_CTAS / NCCL_MAX_CTAS in the environment override every
        communicator's config (NCCL's envConfigOverride), so they must be unset.
      - NCCL without that option (e.g. torch 1.13): NCCL reads NCCL_MIN_CTAS / NCCL_MAX_CTAS once
        per process (NCCL_PARAM caches them), so only a schedule with a single SM count can be
        enforced, by setting both before the first communicator is created.
      - gloo (CPU): collectives run on CPU threads; there is no SM count to limit.
    Anything not enforceable is refused, unless allow_partial, which warns and runs with the
    backend's defaults. `enforced` says which held."""

    def __init__(self, sm_counts, tp_groups=None, *, backend=None, allow_partial=False):
        self.backend = backend or dist.get_backend()
        counts = sorted(set(sm_counts))
        world = dist.get_world_size()
        tp_groups = tp_groups or [list(range(world))]
        rank = dist.get_rank()
        self.enforced, why = self._how(counts)
        if not self.enforced:
            if not allow_partial:
                raise Error(f"kareus.nanobatch: the schedule's collective SM counts {counts} "
                            f"cannot be enforced: {why}; pass allow_partial=True to run them "
                            "with the backend's defaults")
            warnings.warn(f"kareus.nanobatch: SM counts {counts} not enforced: {why}",
                          RuntimeWarning, stacklevel=3)
        self.groups = {}
        for sms in counts:
            for ranks in tp_groups:
                group = dist.new_group(ranks, backend=self.backend,
                                       pg_options=self._options(sms))
                if rank in ranks:
                    self.groups[sms] = group

    def _how(self, counts):
        if self.backend != "nccl":
            return False, f"the {self.backend} backend runs collectives without SMs to limit"
        options = getattr(getattr(dist, "ProcessGroupNCCL", None), "Options", None)
        has_config = options is not None and hasattr(options(), "config")
        env = {v: os.environ.get(v) for v in ("NCCL_MIN_CTAS", "NCCL_MAX_CTAS")}
        if has_config:
            if any(env.values()):
                return False, ("NCCL_MIN_CTAS/NCCL_MAX_CTAS are set and override every "
                               "communicator's config")
            return True, ""
        if len(counts) == 1:
            wanted = str(counts[0])
            if any(v not in (None, wanted) for v in env.values()):
                return False, f"NCCL_MIN_CTAS/NCCL_MAX_CTAS are set to other values ({env})"
            os.environ["NCCL_MIN_CTAS"] = os.environ["NCCL_MAX_CTAS"] = wanted
            return True, ""
        return False, (f"torch {torch.__version__} exposes no per-communicator NCCL config and "
                       "NCCL reads NCCL_MIN_CTAS/NCCL_MAX_CTAS once per process")

    def _options(self, sms):
        if self.backend != "nccl" or not self.enforced:
            return None
        options_type = getattr(getattr(dist, "ProcessGroupNCCL", None), "Options", None)
        if options_type is None:
            return None
        options = options_type()
        if not hasattr(options, "config"):
            return None  # the single count is in NCCL_MIN_CTAS / NCCL_MAX_CTAS
        options.config.min_ctas = options.config.max_ctas = sms
        return options

    def group_for(self, sms):
        if sms not in self.groups:
            raise Error(f"kareus.nanobatch: no communicator for {sms} SMs; the pool has "
                        f"{sorted(self.groups)}")
        return self.groups[sms]


class _ReduceFromTP(torch.autograd.Function):
    """AllReduce forward, identity backward (after a row-parallel linear)."""

    @staticmethod
    def forward(ctx, t, group):
        t = t.clone()
        dist.all_reduce(t, group=group)
        return t

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class _CopyToTP(torch.autograd.Function):
    """Identity forward, AllReduce of the gradient backward (before a column-parallel linear)."""

    @staticmethod
    def forward(ctx, t, group):
        ctx.group = group
        return t.view_as(t)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None


class NanobatchTPStack(torch.nn.Module):
    """Runs TensorParallelLayers as the current schedule instruction says: `sequential` as one
    batch with blocking collectives, `nanobatch` as two nanobatches with each collective overlapped
    at its scheduled slot on its SM-count communicator.

    group: the TP process group (None: the default group). tp_groups: every TP group of the job
    as rank lists, for the per-SM-count communicators (default: one group of all ranks).
    recompute: full activation recomputation; the backward first re-runs the forward with the
    instruction's recompute_partitions. on_event: test hook called with every ("op", ...) and
    ("launch", ...) event in execution order.

    PipelineStage(..., layers=stack) attaches the stack to the schedule (checking every
    instruction's partitions against its segments before any clock changes); without it,
    `instruction` is a callable returning the current kareus.ScheduleInstruction."""

    def __init__(self, layers, group=None, *, tp_groups=None, recompute=False, instruction=None,
                 on_event=None):
        super().__init__()
        self.layers = torch.nn.ModuleList(layers)
        self.group, self.tp_groups, self.recompute = group, tp_groups, recompute
        self.instruction, self.on_event = instruction, on_event
        self.forward_segments, self.tp_inputs = _forward_program(list(self.layers))
        self.backward_segments = _backward_program(self.forward_segments, self.tp_inputs)
        self.pool = None
        self._params = [p for layer in self.layers for p in layer.parameters()]
        # One rank holds every weight: the collectives are identities.
        self.single = all(layer.tp_size == 1 for layer in self.layers)

    def attach(self, stage, *, allow_partial=False):
        """Takes the current instruction from a kareus.torch.PipelineStage and builds the
        communicators of every SM count its schedule uses, after checking every partition."""
        self.instruction = lambda: stage.current_instruction
        counts = self.check(stage.instructions)
        if counts and dist.is_initialized():
            self.pool = CommunicatorPool(counts, self.tp_groups, allow_partial=allow_partial)

    def check(self, instructions):
        """Raises kareus.Error unless every nanobatch instruction names a configuration for each
        partition of the stack at an existing slot; returns the SM counts used."""
        counts = set()
        for index, ins in enumerate(instructions):
            if ins.execution != "nanobatch":
                continue
            checks = [("partitions", "fwd" if ins.direction == "forward" else "bwd",
                       self.forward_segments if ins.direction == "forward"
                       else self.backward_segments, ins.partitions)]
            if ins.direction == "backward" and self.recompute:
                checks.append(("recompute_partitions", "fwd", self.forward_segments,
                               ins.recompute_partitions))
            for field, prefix, segments, partitions in checks:
                for segment in segments:
                    if segment.name == "trail":
                        continue  # fixed configuration
                    key = f"{prefix}_{segment.name}"
                    launch = partitions.get(key)
                    where = (f"kareus.nanobatch: instruction {index} ({ins.direction} of "
                             f"microbatch {ins.microbatch}) {field}")
                    if launch is None:
                        raise Error(f"{where} has no \"{key}\"; it has {sorted(partitions)}")
                    if launch.slot not in segment.slots:
                        raise Error(f"{where}/{key}: slot \"{launch.slot}\" is not one of this "
                                    f"stack's {segment.name} slots {segment.slots}")
                    counts.add(launch.sms)
        if any(i.execution == "nanobatch" for i in instructions):
            counts.add(TRAIL_SMS)
        return sorted(counts)

    def forward(self, x):
        ins = self.instruction() if self.instruction else None
        if ins is None or ins.execution == "sequential":
            return self._plain(x)
        if x.shape[0] % 2:
            raise Error(f"kareus.nanobatch: a microbatch of {x.shape[0]} cannot be split into two "
                        "nanobatches (dimension 0 must be even)")
        return _NanobatchFunction.apply(self, x, *self._params)

    # -- execution ---------------------------------------------------------------------------

    def _plain(self, x):
        store = {"x": x}
        for segment in self.forward_segments:
            for op in segment.ops:
                inputs = [store[n] for n in op.inputs]
                if op.linear and op.inputs[0] in self.tp_inputs and not self.single:
                    inputs[0] = _CopyToTP.apply(inputs[0], self.group)
                store[op.output] = op.fn(*inputs, *op.params)
            if segment.collective:
                source, result = segment.collective
                store[result] = (store[source] if self.single else
                                 _ReduceFromTP.apply(store[source], self.group))
        return store["out"]

    def _emit(self, *event):
        if self.on_event is not None:
            self.on_event(event)

    def _launch_config(self, partitions, prefix, segment):
        if segment.name == "trail":
            return TRAIL_SLOT, TRAIL_SMS
        launch = partitions[f"{prefix}_{segment.name}"]
        return launch.slot, launch.sms

    def _group(self, sms):
        return self.pool.group_for(sms) if self.pool is not None else self.group

    def _run(self, segments, stores, partitions, prefix, step):
        """Runs `segments` for both nanobatches in partition order: NB0 then NB1 of each
        segment. The collective a nanobatch ends a segment with is launched in the next
        partition, at that partition's slot."""
        carried = None
        for k, segment in enumerate(segments):
            for nb in (0, 1):
                comm, carried = carried, None
                slot = sms = None
                if comm is not None:
                    slot, sms = self._launch_config(partitions, prefix, segment)
                for index, sub in enumerate(segment.ops):
                    if comm is not None and segment.slots[index] == slot:
                        self._collective(comm, sms, prefix, segment, nb, slot)
                        comm = None
                    self._emit("op", prefix, k, nb, segment.slots[index])
                    step(sub, stores[nb])
                if comm is not None:  # check() makes this unreachable for scheduled slots
                    raise Error(f"kareus.nanobatch: slot {slot} not found in {segment.slots}")
                if segment.collective is not None:
                    carried = (nb, stores[nb], segment.collective)

    def _collective(self, comm, sms, prefix, segment, nb, slot):
        owner, store, (source, result) = comm
        tensor = _get(store, source).clone()
        self._emit("launch", prefix, f"{prefix}_{segment.name}", nb, slot, sms, owner, source)
        if self.single:
            store[result] = tensor
            return
        work = dist.all_reduce(tensor, group=self._group(sms), async_op=True)
        store[result] = _Pending(work, tensor)

    def run_forward(self, x, partitions, record):
        """Nanobatch forward; with `record`, each op's graph is kept for the backward."""
        halves = x.detach().chunk(2, dim=0)
        stores = [{"x": halves[0]}, {"x": halves[1]}]
        tapes = [{}, {}]

        def step(op, store):
            inputs = [_get(store, n) for n in op.inputs]
            tape = tapes[0] if store is stores[0] else tapes[1]
            if record:
                leaves = [t.detach().requires_grad_() for t in inputs]
                with torch.enable_grad():
                    out = op.fn(*leaves, *op.params)
                tape[op.output] = (leaves, out)
                store[op.output] = out.detach()
            else:
                with torch.no_grad():
                    store[op.output] = op.fn(*inputs, *op.params)

        self._run(self.forward_segments, stores, partitions, "fwd", step)
        out = torch.cat([_get(stores[0], "out"), _get(stores[1], "out")], dim=0)
        return out, tapes

    def run_backward(self, tapes, grad, partitions):
        """Nanobatch backward over recorded tapes: per-op autograd, dgrad and wgrad of a linear
        as two ops, the gradient AllReduces overlapped at their slots. Returns the input's
        gradient and one gradient (or None) per parameter."""
        # The gradient of a row-parallel output is that of its reduced value.
        alias = {s.collective[0]: s.collective[1] for s in self.forward_segments if s.collective}
        halves = grad.chunk(2, dim=0)
        grads = [{"out": halves[0].contiguous()}, {"out": halves[1].contiguous()}]
        param_grads = {}

        def add(store, name, value):
            if value is None:
                return
            store[name] = _get(store, name) + value if name in store else value

        def add_param(p, value):
            if value is not None:
                param_grads[p] = param_grads[p] + value if p in param_grads else value

        def step(sub, store):
            op = sub.op
            tape = tapes[0] if store is grads[0] else tapes[1]
            leaves, out = tape[op.output]
            g = _get(store, alias.get(op.output, op.output))
            if sub.part == "dgrad":
                (d,) = torch.autograd.grad(out, leaves[0], g, retain_graph=True)
                add(store, op.inputs[0], d)
            elif sub.part == "wgrad":
                for p, d in zip(op.params, torch.autograd.grad(out, op.params, g)):
                    add_param(p, d)
            else:
                results = torch.autograd.grad(out, leaves + op.params, g, allow_unused=True)
                for name, d in zip(op.inputs, results[: len(leaves)]):
                    add(store, name, d)
                for p, d in zip(op.params, results[len(leaves):]):
                    add_param(p, d)

        self._run(self.backward_segments, grads, partitions, "bwd", step)
        gx = torch.cat([_get(grads[0], "x"), _get(grads[1], "x")], dim=0)
        return gx, [param_grads.get(p) for p in self._params]


class _NanobatchFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, stack, x, *params):
        ins = stack.instruction()
        ctx.stack, ctx.microbatch = stack, ins.microbatch
        if stack.recompute:
            out, _ = stack.run_forward(x, ins.partitions, record=False)
            ctx.save_for_backward(x)
        else:
            out, ctx.tapes = stack.run_forward(x, ins.partitions, record=True)
        return out

    @staticmethod
    def backward(ctx, grad):
        stack = ctx.stack
        ins = stack.instruction()
        if ins is None or ins.direction != "backward" or ins.microbatch != ctx.microbatch:
            raise Error(f"kareus.nanobatch: the backward of microbatch {ctx.microbatch} runs "
                        f"while the schedule's current instruction is {ins}")
        tapes = getattr(ctx, "tapes", None)
        if stack.recompute:
            (x,) = ctx.saved_tensors
            _, tapes = stack.run_forward(x, ins.recompute_partitions, record=True)
        gx, param_grads = stack.run_backward(tapes, grad, ins.partitions)
        ctx.tapes = None
        return (None, gx, *param_grads)
