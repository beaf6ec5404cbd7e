# SPDX-License-Identifier: Apache-2.0
"""Nanobatch execution of tensor- and context-parallel transformer layers, as a Kareus or
nanobatch-perseus schedule decides (docs/python.md).

Such a schedule runs each microbatch as two nanobatches: while one nanobatch computes a partition
(a run of compute ops between two collectives), the other nanobatch's collective runs beside it,
launched before the compute op the schedule names (its launch slot) and on a communicator limited
to the schedule's SM count. NanobatchTPStack executes exactly that for a stack of Megatron-style
layers, forward and backward (and the forward re-run under full recomputation), and is
numerically the unsplit stack (up to floating-point reassociation of the two halves).

    layers = [TensorParallelLayer(hidden, heads, ffn, tp_size, tp_rank) for _ in range(n)]
    stack = NanobatchTPStack(layers, tp_group)
    with kareus.torch.PipelineStage(stage_module, "schedule.json", stage=pp_rank,
                                    gpu=local_rank, layers=stack) as ks:
        ...  # stage_module calls stack(x) for its transformer layers

Segments, partition keys and launch slots follow the planner (src/partition/partition.cpp): the
ops are cut at every collective of the layout; a segment is named by what it computes (attn, mlp;
qkv, ao, o, a under CP, whose keys also name the overlapped collective: fwd_ao_ag); one with
neither a linear nor attention (the last residual add forward, the first layer norm's backward)
is `trail`, which runs the planner's fixed norm_0 / 20 SM configuration; slots are numbered per op class within a segment, consecutive memory-bound ops and
a linear's dgrad and wgrad sharing one slot.
"""

import math
import os
import warnings

import torch
import torch.distributed as dist
import torch.nn.functional as F

from ._kareus import Error

__all__ = ["CommunicatorPool", "NanobatchTPStack", "TensorParallelLayer", "cp_positions"]

# The trail partition's fixed configuration (kTrailSms in src/partition's partition.hpp).
TRAIL_SLOT, TRAIL_SMS = "norm_0", 20


def cp_positions(seq_local, cp_size, cp_rank):
    """The global sequence positions of a context-parallel rank's tokens, as Megatron-LM shards a
    causal sequence for load balance: cut into 2 x cp_size chunks, rank r holds chunk r and chunk
    2 cp_size - 1 - r. With cp_size 1, every position."""
    if cp_size == 1:
        return torch.arange(seq_local)
    if seq_local % 2:
        raise Error(f"kareus.nanobatch: a context-parallel rank's sequence ({seq_local} tokens) "
                    "must split into two equal chunks")
    chunk = seq_local // 2
    first, second = cp_rank * chunk, (2 * cp_size - 1 - cp_rank) * chunk
    return torch.cat([torch.arange(first, first + chunk), torch.arange(second, second + chunk)])


class TensorParallelLayer(torch.nn.Module):
    """A pre-norm transformer layer split as Megatron-LM splits it over a tensor-parallel group
    (without sequence parallelism) and a context-parallel group: column-parallel QKV and fc1,
    row-parallel output projection and fc2 each followed by an AllReduce over TP, this rank's
    heads of causal rotary attention, GELU MLP. Under context parallelism each rank holds the
    tokens cp_positions() names; attention all-gathers the keys and values of the whole sequence
    over CP (as Llama 3 does), and its backward reduce-scatters their gradients.

    The full weights come from `seed`, and each rank keeps its slice, so a layer built with
    tp_size=1 holds all of them: the same function on one rank."""

    def __init__(self, hidden, heads, ffn, tp_size=1, tp_rank=0, *, cp_size=1, cp_rank=0,
                 seed=0, dtype=torch.float32, device=None):
        super().__init__()
        if heads % tp_size or ffn % tp_size or hidden % heads:
            raise Error(f"TensorParallelLayer: heads ({heads}) and ffn ({ffn}) must divide by "
                        f"tp_size ({tp_size}) and hidden ({hidden}) by heads")
        self.hidden, self.heads, self.ffn, self.tp_size = hidden, heads, ffn, tp_size
        self.cp_size, self.cp_rank = cp_size, cp_rank
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

    def positions(self, seq_local):
        return cp_positions(seq_local, self.cp_size, self.cp_rank)

    def rotary(self, qkv):
        """Rotary embedding of the queries and keys of qkv [batch, seq, 3, heads, head_dim], at
        the global positions of this rank's tokens."""
        d = self.head_dim
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
        angles = torch.outer(self.positions(qkv.shape[1]).to(torch.float64), inv)
        cos = angles.cos().to(qkv)[None, :, None, :]
        sin = angles.sin().to(qkv)[None, :, None, :]

        def rotate(t):
            a, b = t[..., : d // 2], t[..., d // 2:]
            return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)

        return torch.stack([rotate(qkv[:, :, 0]), rotate(qkv[:, :, 1]), qkv[:, :, 2]], dim=2)

    def attention(self, qkv, kv):
        """Causal attention of this rank's queries (qkv[:, :, 0]) over the keys and values `kv`
        [batch, sequence, 2, heads, head_dim] of the whole sequence in position order."""
        q = qkv[:, :, 0].transpose(1, 2)  # [batch, heads, local seq, head_dim]
        k, v = (t.transpose(1, 2) for t in kv.unbind(2))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        query_at = self.positions(q.shape[2]).to(scores.device)
        key_at = torch.arange(k.shape[2], device=scores.device)
        causal = key_at[None, :] > query_at[:, None]
        probs = scores.masked_fill(causal, float("-inf")).softmax(-1)
        return (probs @ v).transpose(1, 2).flatten(2)


# Launch-slot classes whose kernels are memory-bound: consecutive ones share one slot.
_MEMORY = {"norm", "rope", "activation"}


class _Op:
    """One compute op: `kind` is its launch-slot class (norm, linear, rope, attn, activation),
    `module` the linear it belongs to (qkv_proj, out_proj, fc1, fc2), as the planner names them.
    `regather`: the name of this rank's keys and values, whose all-gather is `inputs[1]`; the
    backward gathers them again rather than keeping the gathered tensor."""

    def __init__(self, kind, fn, inputs, output, params=(), module=None, regather=None):
        self.kind, self.fn, self.inputs, self.output = kind, fn, inputs, output
        self.params, self.module, self.regather = list(params), module, regather
        self.linear = kind == "linear"


def _slot_names(ops):
    """The launch slot each op belongs to, by the planner's rule (src/partition/partition.cpp):
    consecutive memory-bound ops share the first one's slot, as do the dgrad and wgrad of one
    linear; slots are numbered per class within a segment."""
    counters, names = {}, []
    for i, op in enumerate(ops):
        previous = ops[i - 1] if i else None
        if previous is not None and (
                (op.kind in _MEMORY and previous.kind in _MEMORY)
                or (op.linear and previous.linear and op.module == previous.module)):
            names.append(names[-1])
            continue
        n = counters.get(op.kind, 0)
        counters[op.kind] = n + 1
        names.append(f"{op.kind}_{n}")
    return names


def _compute_name(ops, cp_layout):
    """A segment's name by what it computes, as the planner names partitions."""
    modules = {op.module for op in ops}
    if "fc1" in modules or "fc2" in modules:
        return "mlp"
    qkv, out = "qkv_proj" in modules, "out_proj" in modules
    attn = any(op.kind == "attn" for op in ops)
    if not cp_layout and (qkv or attn or out):
        return "attn"
    if qkv:
        return "qkv"
    if attn and out:
        return "ao"
    return "o" if out else "a" if attn else "trail"


class _Segment:
    """Compute ops between two collectives; `collective` = (kind, name it reads, name of the
    result) with kind "ar" (all-reduce over TP), "ag" (all-gather over CP) or "rs"
    (reduce-scatter over CP); None for the last segment."""

    def __init__(self, ops, collective, cp_layout):
        self.ops, self.collective = ops, collective
        self.op_slots = _slot_names(ops)
        self.slots = list(dict.fromkeys(self.op_slots))
        self.name = _compute_name(ops, cp_layout)


def _identity(t):
    return t.view_as(t)


def _keys_and_values(qr):
    return qr[:, :, 1:]


def _value(name):
    """A forward value held in a backward store, whose other keys are gradients."""
    return name + "@value"


class _BackwardOp:
    """The backward of a forward op (or of its dgrad or wgrad half, for a linear)."""

    def __init__(self, op, part):
        self.op, self.part, self.kind = op, part, op.kind
        self.linear, self.module = op.linear, op.module


class _Program:
    """The stack's forward and backward as segments; value names carry the layer index.
    Segments are cut at every collective of the layout: a TP all-reduce after each row-parallel
    linear (TP > 1), a CP all-gather of the keys and values before attention (CP > 1)."""

    def __init__(self, layers):
        tp, cp = layers[0].tp_size, layers[0].cp_size
        self.cp_layout = cp > 1
        self.forward, ops = [], []

        def op(*args, **kwargs):
            ops.append(_Op(*args, **kwargs))

        def cut(collective):
            self.forward.append(_Segment(list(ops), collective, self.cp_layout))
            ops.clear()

        def reduced(name):  # a row-parallel output (o0, m0) as the next op reads it (or0, mr0)
            return name[0] + "r" + name[1:] if tp > 1 else name

        previous = None
        for i, L in enumerate(layers):
            h = f"h{i}"
            if previous is not None:
                op("norm", lambda y, m, b: y + m + b, [f"y{i - 1}", reduced(f"m{i - 1}")], h,
                   [previous.fc2_bias])
            else:
                # Where a middle layer's segment starts with the previous residual add: an empty
                # op, so every first segment has a middle layer's slots.
                op("norm", _identity, ["x"], h)
            op("norm", lambda t, w, b, L=L: F.layer_norm(t, (L.hidden,), w, b), [h], f"a{i}",
               [L.ln1_weight, L.ln1_bias])
            op("linear", F.linear, [f"a{i}"], f"qkv{i}", [L.qkv_weight, L.qkv_bias],
               module="qkv_proj")
            op("rope", lambda t, L=L: t.unflatten(-1, (3, L.local_heads, L.head_dim)),
               [f"qkv{i}"], f"qs{i}")
            op("rope", lambda t, L=L: L.rotary(t), [f"qs{i}"], f"qr{i}")
            if cp > 1:
                op("rope", _keys_and_values, [f"qr{i}"], f"kv{i}")
                cut(("ag", f"kv{i}", f"kvf{i}"))
                op("attn", lambda t, kv, L=L: L.attention(t, kv), [f"qr{i}", f"kvf{i}"], f"c{i}",
                   regather=f"kv{i}")
            else:
                op("attn", lambda t, L=L: L.attention(t, _keys_and_values(t)), [f"qr{i}"],
                   f"c{i}")
            op("linear", F.linear, [f"c{i}"], f"o{i}", [L.out_weight], module="out_proj")
            if tp > 1:
                cut(("ar", f"o{i}", reduced(f"o{i}")))
            op("norm", lambda t, r, b: t + r + b, [h, reduced(f"o{i}")], f"y{i}", [L.out_bias])
            op("norm", lambda t, w, b, L=L: F.layer_norm(t, (L.hidden,), w, b), [f"y{i}"],
               f"b{i}", [L.ln2_weight, L.ln2_bias])
            op("linear", F.linear, [f"b{i}"], f"f{i}", [L.fc1_weight, L.fc1_bias], module="fc1")
            op("activation", F.gelu, [f"f{i}"], f"g{i}")
            op("linear", F.linear, [f"g{i}"], f"m{i}", [L.fc2_weight], module="fc2")
            if tp > 1:
                cut(("ar", f"m{i}", reduced(f"m{i}")))
            previous = L
        last = len(layers) - 1
        op("norm", lambda y, m, b: y + m + b, [f"y{last}", reduced(f"m{last}")], "z",
           [previous.fc2_bias])
        op("norm", _identity, ["z"], "out")
        cut(None)
        # Inputs of column-parallel linears: identity forward, TP all-reduce of their gradient.
        self.tp_inputs = ({f"a{i}" for i in range(len(layers))}
                          | {f"b{i}" for i in range(len(layers))}) if tp > 1 else set()
        self.backward = self._backward_segments()

    def _backward_segments(self):
        """Reverse-order backward ops. A linear's backward is its dgrad then its wgrad; after the
        wgrad of a column-parallel linear (TP > 1) its input's gradient is all-reduced (Megatron's
        copy-to-tensor-parallel-region backward). Under CP the keys and values are all-gathered
        again before attention's backward and their gradients reduce-scattered after it, where
        the planner puts those collectives."""
        out, ops = [], []

        def cut(collective):
            out.append(_Segment(list(ops), collective, self.cp_layout))
            ops.clear()

        for segment in reversed(self.forward):
            for op in reversed(segment.ops):
                if op.linear:
                    ops.extend([_BackwardOp(op, "dgrad"), _BackwardOp(op, "wgrad")])
                    if op.inputs[0] in self.tp_inputs:
                        cut(("ar", op.inputs[0], op.inputs[0]))
                elif op.regather:
                    cut(("ag", _value(op.regather), _value(op.inputs[1])))
                    ops.append(_BackwardOp(op, "all"))
                    cut(("rs", op.inputs[1], op.regather))
                else:
                    ops.append(_BackwardOp(op, "all"))
        cut(None)
        return out


class _Pending:
    """An async collective's result; the first reader waits for it and takes `finish()`."""

    def __init__(self, work, finish):
        self.work, self.finish = work, finish


def _get(store, name):
    value = store[name]
    if isinstance(value, _Pending):
        value.work.wait()
        store[name] = value = value.finish()
    return value


def nccl_version():
    """The NCCL torch was built with, as (major, minor, patch); None without NCCL."""
    nccl = getattr(getattr(torch, "cuda", None), "nccl", None)
    if not dist.is_nccl_available() or nccl is None:
        return None
    version = nccl.version()
    if isinstance(version, int):  # NCCL_VERSION_CODE: 2.9 on is major*10000 + minor*100 + patch
        return ((version // 10000, version // 100 % 100, version % 100) if version >= 10000
                else (version // 1000, version // 100 % 10, version % 100))
    return tuple(version)


def nccl_cta_variables(version):
    """The environment variables that bound a process's NCCL CTAs (one per channel, each on one
    SM): NCCL_MIN_CTAS / NCCL_MAX_CTAS from NCCL 2.17, NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS
    before."""
    if version is not None and tuple(version) >= (2, 17):
        return "NCCL_MIN_CTAS", "NCCL_MAX_CTAS"
    return "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS"


_ALL_CTA_VARIABLES = ("NCCL_MIN_CTAS", "NCCL_MAX_CTAS", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS")


class CommunicatorPool:
    """One communicator per SM count the schedule gives a collective, over one kind of group (the
    TP groups, or the CP groups).

    Every rank creates every group in the same order (torch.distributed requires it), for each
    group of the job (`groups`: rank lists, default all ranks), keeping those it belongs to. The
    SM limit is set where the running torch and NCCL can:
      - torch exposing ProcessGroupNCCL.Options().config (NCCLConfig; torch 2.2 and later built
        with NCCL 2.17 or later; detected by the attribute, not the version): min_ctas = max_ctas
        = SM count per communicator, since NCCL runs one CTA per channel, each on one SM. The
        CTA and channel environment variables override or cap every communicator's config, so
        they must be unset.
      - torch without it: NCCL reads its CTA bounds from the environment once per process
        (NCCL_PARAM caches them): NCCL_MIN_CTAS / NCCL_MAX_CTAS from NCCL 2.17,
        NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS before. Only a schedule with a single SM count
        is enforced, by setting both before the first communicator is created.
      - gloo (CPU): collectives run on CPU threads; there is no SM count to limit.
    Anything not enforceable is refused, unless allow_partial, which warns and runs with the
    backend's defaults. `enforced` says which held."""

    def __init__(self, sm_counts, groups=None, *, backend=None, allow_partial=False,
                 what="collective"):
        self.backend = backend or dist.get_backend()
        counts = sorted(set(sm_counts))
        world = dist.get_world_size()
        groups = groups or [list(range(world))]
        rank = dist.get_rank()
        self.enforced, why = self._how(counts)
        if not self.enforced:
            if not allow_partial:
                raise Error(f"kareus.nanobatch: the schedule's {what} SM counts {counts} "
                            f"cannot be enforced: {why}; pass allow_partial=True to run them "
                            "with the backend's defaults")
            warnings.warn(f"kareus.nanobatch: {what} SM counts {counts} not enforced: {why}",
                          RuntimeWarning, stacklevel=3)
        self.groups = {}
        for sms in counts:
            for ranks in groups:
                group = dist.new_group(ranks, backend=self.backend,
                                       pg_options=self._options(sms))
                if rank in ranks:
                    self.groups[sms] = group

    def _how(self, counts):
        if self.backend != "nccl":
            return False, f"the {self.backend} backend runs collectives without SMs to limit"
        options = getattr(getattr(dist, "ProcessGroupNCCL", None), "Options", None)
        has_config = options is not None and hasattr(options(), "config")
        if has_config:
            present = [v for v in _ALL_CTA_VARIABLES if os.environ.get(v)]
            if present:
                return False, (f"{'/'.join(present)} set in the environment override or cap "
                               "every communicator's config")
            return True, ""
        low, high = nccl_cta_variables(nccl_version())
        if len(counts) == 1:
            wanted = str(counts[0])
            env = {v: os.environ.get(v) for v in (low, high)}
            if any(v not in (None, wanted) for v in env.values()):
                return False, f"{low}/{high} are set to other values ({env})"
            os.environ[low] = os.environ[high] = wanted
            return True, ""
        return False, (f"torch {torch.__version__} exposes no per-communicator NCCL config and "
                       f"NCCL reads {low}/{high} once per process")

    def _options(self, sms):
        if self.backend != "nccl" or not self.enforced:
            return None
        options_type = getattr(getattr(dist, "ProcessGroupNCCL", None), "Options", None)
        if options_type is None:
            return None
        options = options_type()
        if not hasattr(options, "config"):
            return None  # the single count is in the environment (nccl_cta_variables)
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


def _gather_sequence(t, group, cp_size, async_op):
    """All-gather over CP of each rank's tokens [batch, local seq, ...] into the whole sequence
    in position order. Returns (work, finish); finish() gives the result once work is done."""
    t = t.contiguous()
    parts = [torch.empty_like(t) for _ in range(cp_size)]
    work = dist.all_gather(parts, t, group=group, async_op=async_op)

    def finish():
        seq = t.shape[1]
        whole = t.new_empty((t.shape[0], seq * cp_size) + tuple(t.shape[2:]))
        for r, part in enumerate(parts):
            whole[:, cp_positions(seq, cp_size, r).to(t.device)] = part
        return whole

    return work, finish


def _reduce_scatter_sequence(t, group, cp_size, cp_rank, async_op):
    """Reduce-scatter over CP of whole-sequence gradients [batch, sequence, ...]: the sum over
    the ranks, at this rank's positions. gloo has no reduce-scatter (torch 1.13), so there it is
    an all-reduce of which each rank keeps its positions: the same result, twice the traffic."""
    seq = t.shape[1] // cp_size
    mine = cp_positions(seq, cp_size, cp_rank).to(t.device)
    if dist.get_backend(group) == "nccl":
        chunks = [t[:, cp_positions(seq, cp_size, r).to(t.device)].contiguous()
                  for r in range(cp_size)]
        out = torch.empty_like(chunks[cp_rank])
        work = dist.reduce_scatter(out, chunks, group=group, async_op=async_op)
        return work, lambda: out
    whole = t.contiguous().clone()
    work = dist.all_reduce(whole, group=group, async_op=async_op)
    return work, lambda: whole[:, mine]


class _GatherFromCP(torch.autograd.Function):
    """All-gather of the sequence forward, reduce-scatter of its gradient backward (the keys and
    values every CP rank's queries attend to)."""

    @staticmethod
    def forward(ctx, t, group, cp_size, cp_rank):
        ctx.group, ctx.cp_size, ctx.cp_rank = group, cp_size, cp_rank
        _, finish = _gather_sequence(t, group, cp_size, async_op=False)
        return finish()

    @staticmethod
    def backward(ctx, grad):
        _, finish = _reduce_scatter_sequence(grad, ctx.group, ctx.cp_size, ctx.cp_rank,
                                             async_op=False)
        return finish(), None, None, None


class NanobatchTPStack(torch.nn.Module):
    """Runs TensorParallelLayers as the current schedule instruction says: `sequential` as one
    batch with blocking collectives, `nanobatch` as two nanobatches with each collective
    overlapped at its scheduled slot on its SM-count communicator.

    group: the TP process group, cp_group: the CP process group (None: the default group).
    tp_groups, cp_groups: every TP (CP) group of the job as rank lists, for the per-SM-count
    communicators (default: one group of all ranks). recompute: full activation recomputation;
    the backward first re-runs the forward with the instruction's recompute_partitions.
    on_event: test hook called with every ("op", ...) and ("launch", ...) event in execution
    order.

    PipelineStage(..., layers=stack) attaches the stack to the schedule (checking every
    instruction's partitions against its segments before any clock changes); without it,
    `instruction` is a callable returning the current kareus.ScheduleInstruction."""

    def __init__(self, layers, group=None, *, cp_group=None, tp_groups=None, cp_groups=None,
                 recompute=False, instruction=None, on_event=None):
        super().__init__()
        self.layers = torch.nn.ModuleList(layers)
        shapes = {(layer.tp_size, layer.cp_size, layer.cp_rank) for layer in self.layers}
        if len(shapes) != 1:
            raise Error(f"kareus.nanobatch: every layer of a stack has one (tp_size, cp_size, "
                        f"cp_rank); these have {sorted(shapes)}")
        self.tp_size, self.cp_size, self.cp_rank = shapes.pop()
        self.group, self.cp_group, self.recompute = group, cp_group, recompute
        self.groups_of = {"tp": tp_groups, "cp": cp_groups}
        self.instruction, self.on_event = instruction, on_event
        self.program = _Program(list(self.layers))
        self.pools = {}
        self._params = [p for layer in self.layers for p in layer.parameters()]

    @property
    def forward_segments(self):
        return self.program.forward

    @property
    def backward_segments(self):
        return self.program.backward

    def attach(self, stage, *, allow_partial=False):
        """Takes the current instruction from a kareus.torch.PipelineStage and builds the
        communicators of every SM count its schedule uses, after checking every partition."""
        self.instruction = lambda: stage.current_instruction
        counts = self.check(stage.instructions)
        if dist.is_initialized():
            for kind, sms in counts.items():
                if sms:
                    self.pools[kind] = CommunicatorPool(
                        sms, self.groups_of[kind], allow_partial=allow_partial,
                        what="TP" if kind == "tp" else "CP")

    def partitions(self, segments, prefix):
        """(segment index, nanobatch, partition key, collective kind) of every partition that
        overlaps a collective, in run order: NB0 of segment k overlaps NB1's collective of
        segment k - 1, NB1 of segment k NB0's of segment k, named as the planner names them
        (under CP, with the collective's kind, except for mlp)."""
        out = []
        for k, segment in enumerate(segments):
            for nb in (0, 1):
                source = segments[k - 1] if nb == 0 else segment
                if (nb == 0 and k == 0) or source.collective is None:
                    continue
                kind = source.collective[0]
                key = f"{prefix}_{segment.name}"
                if self.program.cp_layout and segment.name not in ("mlp", "trail"):
                    key += f"_{kind}"
                out.append((k, nb, key, kind))
        return out

    def check(self, instructions):
        """Raises kareus.Error unless every nanobatch instruction names a configuration for each
        partition of the stack at an existing slot; returns the SM counts used, per kind of group
        ("tp" for all-reduces, "cp" for all-gathers and reduce-scatters)."""
        counts = {"tp": set(), "cp": set()}
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
                for k, _, key, kind in self.partitions(segments, prefix):
                    group = "tp" if kind == "ar" else "cp"
                    segment = segments[k]
                    if segment.name == "trail":
                        counts[group].add(TRAIL_SMS)
                        continue  # fixed configuration
                    launch = partitions.get(key)
                    where = (f"kareus.nanobatch: instruction {index} ({ins.direction} of "
                             f"microbatch {ins.microbatch}) {field}")
                    if launch is None:
                        raise Error(f"{where} has no \"{key}\"; it has {sorted(partitions)}")
                    if launch.slot not in segment.slots:
                        raise Error(f"{where}/{key}: slot \"{launch.slot}\" is not one of this "
                                    f"stack's {segment.name} slots {segment.slots}")
                    counts[group].add(launch.sms)
        return {kind: sorted(sms) for kind, sms in counts.items()}

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
                if op.linear and op.inputs[0] in self.program.tp_inputs:
                    inputs[0] = _CopyToTP.apply(inputs[0], self.group)
                store[op.output] = op.fn(*inputs, *op.params)
            if segment.collective:
                kind, source, result = segment.collective
                store[result] = (
                    _ReduceFromTP.apply(store[source], self.group) if kind == "ar" else
                    _GatherFromCP.apply(store[source], self.cp_group, self.cp_size, self.cp_rank))
        return store["out"]

    def _emit(self, *event):
        if self.on_event is not None:
            self.on_event(event)

    def _launch_config(self, partitions, key, segment):
        if segment.name == "trail":
            return TRAIL_SLOT, TRAIL_SMS
        launch = partitions[key]
        return launch.slot, launch.sms

    def _run(self, segments, stores, partitions, prefix, step):
        """Runs `segments` for both nanobatches in partition order: NB0 then NB1 of each
        segment. The collective a nanobatch ends a segment with is launched in the next
        partition, at that partition's slot."""
        keys = {(k, nb): key for k, nb, key, _ in self.partitions(segments, prefix)}
        carried = None
        for k, segment in enumerate(segments):
            for nb in (0, 1):
                comm, carried = carried, None
                slot = sms = None
                if comm is not None:
                    key = keys[(k, nb)]
                    slot, sms = self._launch_config(partitions, key, segment)
                for index, sub in enumerate(segment.ops):
                    if comm is not None and segment.op_slots[index] == slot:
                        self._collective(comm, sms, prefix, key, nb, slot)
                        comm = None
                    self._emit("op", prefix, k, nb, segment.op_slots[index])
                    step(sub, stores[nb])
                if comm is not None:  # check() makes this unreachable for scheduled slots
                    raise Error(f"kareus.nanobatch: slot {slot} not found in {segment.slots}")
                if segment.collective is not None:
                    carried = (nb, stores[nb], segment.collective)

    def _collective(self, comm, sms, prefix, key, nb, slot):
        owner, store, (kind, source, result) = comm
        tensor = _get(store, source)
        self._emit("launch", prefix, key, nb, slot, sms, owner, source)
        pool = self.pools.get("tp" if kind == "ar" else "cp")
        group = pool.group_for(sms) if pool is not None else (
            self.group if kind == "ar" else self.cp_group)
        if kind == "ar":
            tensor = tensor.clone()
            work, finish = dist.all_reduce(tensor, group=group, async_op=True), lambda: tensor
        elif kind == "ag":
            work, finish = _gather_sequence(tensor, group, self.cp_size, async_op=True)
        else:
            work, finish = _reduce_scatter_sequence(tensor, group, self.cp_size, self.cp_rank,
                                                    async_op=True)
        store[result] = _Pending(work, finish)

    def run_forward(self, x, partitions, record):
        """Nanobatch forward; with `record`, each op's graph is kept for the backward (an op
        whose gathered input the backward gathers again keeps only its own inputs)."""
        halves = x.detach().chunk(2, dim=0)
        stores = [{"x": halves[0]}, {"x": halves[1]}]
        tapes = [{}, {}]

        def step(op, store):
            inputs = [_get(store, n) for n in op.inputs]
            tape = tapes[0] if store is stores[0] else tapes[1]
            if record and not op.regather:
                leaves = [t.detach().requires_grad_() for t in inputs]
                with torch.enable_grad():
                    out = op.fn(*leaves, *op.params)
                tape[op.output] = (leaves, out)
                store[op.output] = out.detach()
            else:
                if record:
                    tape[op.output] = (inputs[:1], None)
                with torch.no_grad():
                    store[op.output] = op.fn(*inputs, *op.params)

        self._run(self.forward_segments, stores, partitions, "fwd", step)
        out = torch.cat([_get(stores[0], "out"), _get(stores[1], "out")], dim=0)
        return out, tapes

    def run_backward(self, tapes, grad, partitions):
        """Nanobatch backward over recorded tapes: per-op autograd, dgrad and wgrad of a linear
        as two ops, the collectives overlapped at their slots. Returns the input's gradient and
        one gradient (or None) per parameter."""
        # The gradient of a row-parallel output is that of its reduced value.
        alias = {s.collective[1]: s.collective[2] for s in self.forward_segments
                 if s.collective and s.collective[0] == "ar"}
        halves = grad.chunk(2, dim=0)
        grads = [{"out": halves[0].contiguous()}, {"out": halves[1].contiguous()}]
        for store, tape in zip(grads, tapes):
            # The keys and values the backward gathers again.
            for segment in self.forward_segments:
                for op in segment.ops:
                    if op.regather:
                        store[_value(op.regather)] = tape[op.regather][1].detach()
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
            if op.regather:
                leaves = [leaves[0].detach().requires_grad_(),
                          _get(store, _value(op.inputs[1])).detach().requires_grad_()]
                with torch.enable_grad():
                    out = op.fn(*leaves, *op.params)
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
