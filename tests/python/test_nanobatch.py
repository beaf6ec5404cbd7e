# SPDX-License-Identifier: Apache-2.0
"""kareus.nanobatch on two CPU ranks over gloo: the TP layers equal one unsplit layer, nanobatch
execution equals plain execution forward and backward (with and without full recomputation),
collectives are launched at the scheduled slots in partition order, communicators are grouped
per SM count, and the job's energy is summed over both ranks. The expectations are computed here
from the schedule's JSON and the layer structure, not through kareus.nanobatch."""

import functools
import io
import json
import os
import tempfile
import traceback

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import kareus
import kareus.nanobatch as nb
import kareus.torch
from schedule_log import stage_order

HIDDEN, HEADS, FFN, LAYERS, TP = 16, 4, 32, 2, 2


def _worker(rank, world, init_file, body, args, results):
    try:
        dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                                world_size=world)
        # Bytes, not tensors: a tensor in a queue lives in shared memory that dies with the rank.
        buffer = io.BytesIO()
        torch.save(body(rank, *args), buffer)
        results.put((rank, buffer.getvalue()))
    except BaseException:
        results.put((rank, RuntimeError(traceback.format_exc())))
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def run_ranks(body, *args, world=TP):
    """body(rank, *args) on `world` processes joined by gloo; returns their results by rank."""
    context = mp.get_context("spawn")
    results = context.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        processes = [context.Process(target=_worker,
                                     args=(r, world, os.path.join(tmp, "init"), body, args,
                                           results))
                     for r in range(world)]
        for p in processes:
            p.start()
        out = dict(results.get(timeout=100) for _ in processes)
        for p in processes:
            p.join(timeout=30)
    for rank in range(world):
        if isinstance(out[rank], Exception):
            raise out[rank]
    return [torch.load(io.BytesIO(out[r])) for r in range(world)]


def make_layers(tp_size, tp_rank):
    return [nb.TensorParallelLayer(HIDDEN, HEADS, FFN, tp_size, tp_rank, seed=10 + i,
                                   dtype=torch.float64) for i in range(LAYERS)]


def batch():
    g = torch.Generator().manual_seed(5)
    return torch.randn(4, 6, HIDDEN, generator=g, dtype=torch.float64)


def instructions(document, stage=0):
    """The ScheduleInstructions of `stage`, by (microbatch, direction)."""
    schedule = kareus.parse_schedule(json.dumps(document), "test")
    return {(i.microbatch, i.direction): i for i in schedule.stages[stage].instructions}


def run_microbatch(stack, x, holder, fwd, bwd, weights=None):
    """One forward and backward of `stack` with `holder[0]` the current instruction; the loss
    weighs the output by `weights` (default: a ramp over its elements)."""
    for p in stack.parameters():
        p.grad = None
    x = x.clone().requires_grad_()
    holder[0] = fwd
    out = stack(x)
    holder[0] = bwd
    if weights is None:
        weights = torch.linspace(-1, 1, out.numel(), dtype=out.dtype).view_as(out)
    (out * weights).sum().backward()
    return out.detach(), x.grad, [p.grad.clone() for p in stack.parameters()]


def equality_body(rank, document, recompute):
    holder = [None]
    events = []
    stack = nb.NanobatchTPStack(make_layers(TP, rank), recompute=recompute,
                                instruction=lambda: holder[0], on_event=events.append)
    ins = instructions(document)
    x = batch()
    plain = run_microbatch(stack, x, holder, None, None)
    nano = run_microbatch(stack, x, holder, ins[(0, "forward")], ins[(0, "backward")])
    # The unsplit computation on one rank with the full weights.
    full = nb.NanobatchTPStack(make_layers(1, 0))
    reference = run_microbatch(full, x, [None], None, None)
    return {"plain": plain, "nano": nano, "reference_out": reference[0],
            "reference_dx": reference[1], "events": events}


@pytest.fixture
def document(schedule_document):
    return schedule_document  # two_stages.json: fwd_attn norm_0/12, bwd_attn rope_0/30, ...


@functools.lru_cache(maxsize=None)
def equality_run(document_json, recompute):
    """Both ranks' equality_body results, once per configuration for the tests that read them."""
    return run_ranks(equality_body, json.loads(document_json), recompute)


@pytest.mark.parametrize("recompute", [False, True])
def test_nanobatch_equals_the_unsplit_layers(document, recompute):
    results = equality_run(json.dumps(document), recompute)
    for r in results:
        plain_out, plain_dx, plain_grads = r["plain"]
        nano_out, nano_dx, nano_grads = r["nano"]
        torch.testing.assert_close(plain_out, r["reference_out"], rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(plain_dx, r["reference_dx"], rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(nano_out, plain_out, rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(nano_dx, plain_dx, rtol=1e-10, atol=1e-10)
        assert len(nano_grads) == len(plain_grads) == 12 * LAYERS
        for a, b in zip(nano_grads, plain_grads):
            torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)
    # Both ranks launched the same collectives in the same order (else gloo would hang).
    assert results[0]["events"] == results[1]["events"]


def expected_launches(partitions, prefix, kinds):
    """(partition key, nanobatch whose partition launches it, slot, SMs, owner) for a stack whose
    segments have `kinds` (attn/mlp, then the trail): NB0's collective of segment k goes in NB1's
    segment k partition, NB1's in NB0's segment k+1 partition; the trail's is fixed."""
    out = []
    for k, kind in enumerate(kinds):
        for nanobatch in (0, 1):
            if (k, nanobatch) == (0, 0) or (kind == "trail" and nanobatch == 1):
                continue
            if kind == "trail":
                slot, sms = "norm_0", 20
            else:
                launch = partitions[f"{prefix}_{kind}"]
                slot, sms = launch["slot"], launch["sms"]
            out.append((f"{prefix}_{kind}", nanobatch, slot, sms, 1 - nanobatch))
    return out


@pytest.mark.parametrize("recompute", [False, True])
def test_collectives_launch_at_the_scheduled_slots_in_order(document, recompute):
    events = equality_run(json.dumps(document), recompute)[0]["events"]
    launches = [(e[2], e[3], e[4], e[5], e[6]) for e in events if e[0] == "launch"]
    stage0 = document["stages"][0]["instructions"]
    forward, backward = stage0[0], stage0[2]
    assert (forward["microbatch"], backward["microbatch"]) == (0, 0)
    fwd_kinds = ["attn", "mlp"] * LAYERS + ["trail"]
    bwd_kinds = ["mlp", "attn"] * LAYERS + ["trail"]
    expected = expected_launches(forward["partitions"], "fwd", fwd_kinds)
    if recompute:
        expected += expected_launches(backward["recompute_partitions"], "fwd", fwd_kinds)
    expected += expected_launches(backward["partitions"], "bwd", bwd_kinds)
    assert launches == expected
    # Each launch comes right before the op at its slot, in the partition that launches it.
    for i, e in enumerate(events):
        if e[0] == "launch":
            following = events[i + 1]
            assert following[0] == "op" and following[1] == e[1]
            assert (following[3], following[4]) == (e[3], e[4])


def test_a_slot_the_stack_does_not_have_is_refused(document):
    document = json.loads(json.dumps(document))
    document["stages"][0]["instructions"][0]["partitions"]["fwd_mlp"]["slot"] = "rope_0"
    stack = nb.NanobatchTPStack(make_layers(TP, 0))
    with pytest.raises(kareus.Error, match=r"slot \"rope_0\" is not one of this stack's mlp"):
        stack.check(list(instructions(document).values()))
    del document["stages"][0]["instructions"][0]["partitions"]["fwd_mlp"]
    with pytest.raises(kareus.Error, match="has no \"fwd_mlp\""):
        stack.check(list(instructions(document).values()))


def pool_body(rank):
    counts = [12, 18, 12, 30]
    try:
        nb.CommunicatorPool(counts)
        refused = ""
    except kareus.Error as e:
        refused = str(e)
    pool = nb.CommunicatorPool(counts, allow_partial=True)
    same = pool.group_for(12) is pool.group_for(12)
    distinct = len({id(pool.group_for(s)) for s in (12, 18, 30)})
    t = torch.full((3,), float(rank + 1))
    dist.all_reduce(t, group=pool.group_for(18))
    return {"refused": refused, "same": same, "distinct": distinct, "sum": t.tolist(),
            "sizes": [dist.get_world_size(pool.group_for(s)) for s in (12, 18, 30)],
            "enforced": pool.enforced}


def test_one_communicator_per_sm_count():
    for r in run_ranks(pool_body):
        assert "cannot be enforced" in r["refused"] and "gloo" in r["refused"]
        assert r["same"] and r["distinct"] == 3
        assert r["sum"] == [3.0, 3.0, 3.0]
        assert r["sizes"] == [2, 2, 2]
        assert r["enforced"] is False


class Stage(torch.nn.Module):
    """A pipeline stage whose transformer layers are a NanobatchTPStack."""

    def __init__(self, stack):
        super().__init__()
        self.stack = stack

    def forward(self, x):
        return self.stack(x)


def two_a100(env):
    """Each rank on its own fake A100."""
    return dict(env, KAREUS_FAKE_NVML_SCRIPT=os.path.join(os.environ["KAREUS_TEST_DATA_DIR"],
                                                          "nvml", "two_a100.json"))


def pipeline_body(rank, schedule_path, order, env):
    os.environ.update(env)
    stack = nb.NanobatchTPStack(make_layers(TP, rank), recompute=True)
    model = Stage(stack)
    data = [batch() + m for m in range(3)]
    with kareus.torch.PipelineStage(model, schedule_path, stage=0, nvml_gpu=rank,
                                    layers=stack, allow_partial=True, microbatches=3,
                                    pipeline_stages=2) as ks:
        outputs = {}
        for microbatch, direction in order:
            if direction == "forward":
                outputs[microbatch] = model(data[microbatch].clone().requires_grad_())
            else:
                outputs.pop(microbatch).square().mean().backward()
        ks.step()
        job = ks.report_job_energy()
    own = ks.measurements[-1]
    grads = [p.grad.clone() for p in stack.parameters()]
    # The same iteration without the schedule: plain TP execution.
    for p in stack.parameters():
        p.grad = None
    for m in range(3):
        stack(data[m].clone()).square().mean().backward()
    plain = [p.grad.clone() for p in stack.parameters()]
    return {"job": job, "own": (own.time_s, own.total_energy_j), "grads": grads, "plain": plain}


def test_pipeline_stage_runs_the_schedule_with_the_stack(schedule_path, schedule_document,
                                                         nvml_log, capfd):
    env = two_a100({"KAREUS_FAKE_NVML_LOG": str(nvml_log.path)})
    results = run_ranks(pipeline_body, str(schedule_path), stage_order(schedule_document, 0),
                        env)
    for r in results:
        for a, b in zip(r["grads"], r["plain"]):
            torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)
    # Job-wide energy: the sum over both ranks' own windows, the slowest rank's time.
    job = results[0]["job"]
    assert results[1]["job"] == job
    assert job["ranks"] == 2
    assert job["energy_j"] == pytest.approx(sum(r["own"][1] for r in results), rel=1e-12)
    assert job["time_s"] == max(r["own"][0] for r in results)
    assert job["predicted_energy_j"] == schedule_document["predicted"]["energy_j"]
    assert "schedule predicts 2.750 s, 9800.5 J" in capfd.readouterr().out
    # Each rank played stage 0's clocks on its (fake) GPU and reset it once.
    lines = nvml_log.lines()
    for gpu in (0, 1):
        assert lines.count(f"nvmlDeviceResetGpuLockedClocks {gpu}") == 1
        assert lines.count(f"nvmlDeviceSetGpuLockedClocks {gpu} 1410 1410") == 1


def test_pipeline_stage_refuses_unenforceable_sm_counts(schedule_path):
    for message in run_ranks(_refusal_body, str(schedule_path), two_a100({})):
        assert "TP SM counts [12, 15, 18, 20, 21, 30] cannot be enforced" in message


def _refusal_body(rank, path, env):
    os.environ.update(env)
    stack = nb.NanobatchTPStack(make_layers(TP, rank), recompute=True)
    try:
        with kareus.torch.PipelineStage(Stage(stack), path, stage=0, nvml_gpu=rank,
                                        layers=stack, measure_energy=False):
            pass
    except kareus.Error as e:
        return str(e)
    return ""


def _shared_gpu_body(rank, path):
    try:
        kareus.torch.PipelineStage(torch.nn.Linear(4, 4), path, stage=rank, nvml_gpu=0,
                                   measure_energy=False)
    except kareus.Error as e:
        return str(e)
    return ""


def test_two_ranks_on_one_gpu_are_refused(clocks_schedule_path, nvml_log):
    messages = run_ranks(_shared_gpu_body, str(clocks_schedule_path))
    assert "rank 0 shares its GPU with rank(s) 1" in messages[0]
    assert "rank 1 shares its GPU with rank(s) 0" in messages[1]
    assert nvml_log.lines() == []


# -- every layout the planner emits partitions for ------------------------------------------------

LAYOUTS = {"tp2": (2, 1), "cp2": (1, 2), "tp2-cp2": (2, 2)}


@functools.lru_cache(maxsize=None)
def planned(tp, cp):
    """The schedule document of a nanobatch-perseus plan (nanobatch execution throughout, every
    partition the planner emits) for a one-stage job with this layout."""
    workload = kareus.Workload("qwen3-1.7b", "a100-sxm4-40gb", tp=tp, cp=cp, pp=1,
                               microbatches=1, microbatch_size=2, sequence_length=512,
                               recompute="full")
    plan = kareus.plan(workload, methods=["nanobatch-perseus"], seed=0)
    return json.loads(plan.schedule("nanobatch-perseus",
                                    plan["nanobatch-perseus"].fastest()).to_json())


@pytest.mark.parametrize("layout", ["tp2", "tp2-cp2"])
def test_the_stack_runs_every_partition_the_planner_emits(layout):
    """The stack's partition keys and launch slots are the planner's: a plan for the layout
    names exactly the stack's keys, at slots the stack has."""
    tp, cp = LAYOUTS[layout]
    document = planned(tp, cp)
    stack = nb.NanobatchTPStack(
        [nb.TensorParallelLayer(HIDDEN, HEADS, FFN, tp, 0, cp_size=cp, seed=i)
         for i in range(LAYERS)], recompute=True)
    schedule = list(instructions(document).values())
    assert {i.execution for i in schedule} == {"nanobatch"}
    stack.check(schedule)
    forward = {key for _, _, key, _ in stack.partitions(stack.forward_segments, "fwd")}
    backward = {key for _, _, key, _ in stack.partitions(stack.backward_segments, "bwd")}
    for ins in schedule:
        assert set(ins.partitions) == (forward if ins.direction == "forward"
                                       else backward) - {"fwd_trail", "bwd_trail"}
    if cp > 1:
        assert {"fwd_qkv_ag", "fwd_mlp", "bwd_a_ag", "bwd_a_rs"} <= forward | backward


def layout_body(rank, tp, cp, document):
    """Plain and nanobatch execution of a TP x CP stack (TP ranks adjacent, as Megatron orders
    them) against one unsplit stack on the whole sequence; CP ranks hold Megatron's load-balanced
    chunks of it."""
    tp_rank, cp_rank = rank % tp, rank // tp
    tp_group = cp_group = None
    for c in range(cp):  # every rank creates every group, in one order
        group = dist.new_group([c * tp + t for t in range(tp)])
        tp_group = group if c == cp_rank else tp_group
    for t in range(tp):
        group = dist.new_group([c * tp + t for c in range(cp)])
        cp_group = group if t == tp_rank else cp_group
    holder, events = [None], []
    layers = [nb.TensorParallelLayer(HIDDEN, HEADS, FFN, tp, tp_rank, cp_size=cp,
                                     cp_rank=cp_rank, seed=10 + i, dtype=torch.float64)
              for i in range(LAYERS)]
    stack = nb.NanobatchTPStack(layers, tp_group, cp_group=cp_group, recompute=True,
                                instruction=lambda: holder[0], on_event=events.append)
    ins = instructions(document)
    g = torch.Generator().manual_seed(5)
    x = torch.randn(4, 8, HIDDEN, generator=g, dtype=torch.float64)
    weights = torch.randn(4, 8, HIDDEN, generator=g, dtype=torch.float64)
    mine = nb.cp_positions(8 // cp, cp, cp_rank)
    plain = run_microbatch(stack, x[:, mine], holder, None, None, weights[:, mine])
    nano = run_microbatch(stack, x[:, mine], holder, ins[(0, "forward")], ins[(0, "backward")],
                          weights[:, mine])
    reference = run_microbatch(nb.NanobatchTPStack(
        [nb.TensorParallelLayer(HIDDEN, HEADS, FFN, seed=10 + i, dtype=torch.float64)
         for i in range(LAYERS)]), x, [None], None, None, weights)
    # A weight's gradient is the sum over the CP ranks (Megatron reduces it over DP x CP).
    summed = [grad.clone() for grad in plain[2]]
    for grad in summed:
        dist.all_reduce(grad, group=cp_group)
    return {"plain": plain, "nano": nano, "summed": summed, "mine": mine,
            "reference": reference, "launches": [e[1:] for e in events if e[0] == "launch"]}


@pytest.mark.parametrize("layout", ["cp2", "tp2-cp2"])
def test_context_parallel_stack_equals_the_unsplit_layers(layout):
    """On the partitions of a TP 2 x CP 2 plan: the planner plans no CP without TP today, and a
    CP-only stack's keys are a subset of those."""
    tp, cp = LAYOUTS[layout]
    results = run_ranks(layout_body, tp, cp, planned(2, 2), world=tp * cp)
    for r in results:
        out, dx, _ = r["reference"]
        mine = r["mine"]
        for name in ("plain", "nano"):
            torch.testing.assert_close(r[name][0], out[:, mine], rtol=1e-10, atol=1e-10)
            torch.testing.assert_close(r[name][1], dx[:, mine], rtol=1e-10, atol=1e-10)
        for a, b in zip(r["nano"][2], r["plain"][2]):
            torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)
        if tp == 1:  # the weights are whole: their summed gradients are the unsplit ones
            for a, b in zip(r["summed"], r["reference"][2]):
                torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)
        kinds = {launch[1] for launch in r["launches"]}
        assert {"fwd_qkv_ag", "bwd_a_ag", "bwd_a_rs"} <= kinds
    assert all(r["launches"] == results[0]["launches"] for r in results)


def test_the_cta_variables_follow_the_nccl_version():
    assert nb.nccl_cta_variables((2, 17, 1)) == ("NCCL_MIN_CTAS", "NCCL_MAX_CTAS")
    assert nb.nccl_cta_variables((2, 21, 5)) == ("NCCL_MIN_CTAS", "NCCL_MAX_CTAS")
    assert nb.nccl_cta_variables((2, 14, 3)) == ("NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS")
    if not dist.is_nccl_available():
        assert nb.nccl_version() is None


def test_slots_are_counted_as_the_planner_counts_them():
    """Consecutive memory-bound ops share a slot, and so do a linear's dgrad and wgrad: in a
    backward MLP segment linear_1 is fc1's backward (fc2's wgrad has no slot of its own)."""
    stack = nb.NanobatchTPStack(make_layers(TP, 0))
    attention = stack.forward_segments[0]
    assert attention.name == "attn"
    assert attention.slots == ["norm_0", "linear_0", "rope_0", "attn_0", "linear_1"]
    mlp = stack.backward_segments[2]  # a middle one: layer 1's norm, then layer 0's MLP
    assert mlp.name == "mlp"
    modules = {}
    for op, slot in zip(mlp.ops, mlp.op_slots):
        modules.setdefault(slot, set()).add((op.module, op.part))
    assert modules["linear_0"] == {("fc2", "dgrad"), ("fc2", "wgrad")}
    assert modules["linear_1"] == {("fc1", "dgrad"), ("fc1", "wgrad")}
    assert mlp.slots == ["norm_0", "linear_0", "activation_0", "linear_1"]
