# SPDX-License-Identifier: Apache-2.0
"""One selection everywhere: `kareus plan --deadline/--energy-budget [--milp-nodes]`, the C API's
kareus_plan_select[_refined] (through ctypes, on libkareus.so) and Python's select give the same
polished (and refined) plan for the same request, whichever front end and whether the selection
went to plan() or came after it, and a selection after plan() leaves the plan as it was. Each
selection must also be cheaper (or faster) than the unpolished frontier's, and a refined one cheaper
than the polished one, so a front end that skipped the polish or the refinement would fail here."""

import ctypes
import json
import os
import subprocess
import threading
import time

import pytest

import kareus

WORKLOAD = {"model": "llama3.2-3b", "gpu": "a100-sxm4-40gb",
            "parallelism": {"tp": 8, "pp": 2, "microbatch_size": 8, "sequence_length": 4096,
                            "microbatches": 8, "recompute": "full"}}
METHOD = "perseus"
DEADLINE, BUDGET = 1, 2  # kareus_selection


class PlanOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("methods", ctypes.c_char_p),
                ("strategy", ctypes.c_char_p), ("seed", ctypes.c_uint64),
                ("store_path", ctypes.c_char_p), ("noise_sigma", ctypes.c_double),
                ("unit_time_s", ctypes.c_double), ("clock_granularity", ctypes.c_char_p),
                ("switch_latency_s", ctypes.c_double), ("selection", ctypes.c_int),
                ("bound", ctypes.c_double), ("milp_nodes", ctypes.c_int),
                ("enforceable", ctypes.c_char_p)]


class Refinement(ctypes.Structure):
    _fields_ = [("improved", ctypes.c_int), ("time_capped", ctypes.c_int),
                ("time_s", ctypes.c_double)]


class Point(ctypes.Structure):
    _fields_ = [("time_s", ctypes.c_double), ("energy_j", ctypes.c_double),
                ("dynamic_energy_j", ctypes.c_double)]


@pytest.fixture(scope="module")
def workload_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("selection") / "workload.json"
    path.write_text(json.dumps(WORKLOAD))
    return path


@pytest.fixture(scope="module")
def unpolished(workload_path):
    return kareus.plan(kareus.Workload.from_file(workload_path), methods=[METHOD])[METHOD].frontier


def cli_run(workload_path, tmp_path, flag, bound, milp_nodes=0):
    """The selected point, its schedule and the whole summary."""
    out = tmp_path / f"cli{milp_nodes}"
    nodes = ["--milp-nodes", str(milp_nodes)] if milp_nodes else []
    done = subprocess.run([os.environ["KAREUS_BINARY"], "plan", "--workload", str(workload_path),
                           "--methods", METHOD, flag, repr(bound), *nodes, "--json", "--quiet",
                           "--out", str(out)], capture_output=True, text=True, check=True)
    summary = json.loads(done.stdout)
    point = summary["selected"]["point"]
    return ((point["time_s"], point["energy_j"]), json.loads((out / "schedule.json").read_text()),
            summary)


def cli(workload_path, tmp_path, flag, bound, milp_nodes=0):
    return cli_run(workload_path, tmp_path, flag, bound, milp_nodes)[:2]


def python(workload_path, rule, bound, at_plan, milp_nodes=0):
    w = kareus.Workload.from_file(workload_path)
    nodes = {"milp_nodes": milp_nodes} if milp_nodes else {}
    planned = kareus.plan(w, methods=[METHOD], **({rule: bound, **nodes} if at_plan else {}))
    frontier = planned[METHOD].frontier
    selected = planned[METHOD].select(**{rule: bound}, **nodes)
    assert [(p.time_s, p.energy_j, p.plan) for p in planned[METHOD].frontier] == \
        [(p.time_s, p.energy_j, p.plan) for p in frontier]
    if at_plan:
        assert planned.selected.point.time_s == selected.point.time_s
        assert planned.selected.point.energy_j == selected.point.energy_j
        assert planned.schedule(planned.selected).to_json() == planned.schedule(selected).to_json()
    point = selected.point
    return (point.time_s, point.energy_j), json.loads(planned.schedule(selected).to_json())


def c_api(workload_path, rule, bound, milp_nodes=0):
    lib = ctypes.CDLL(os.environ["KAREUS_C_LIBRARY"])
    options = PlanOptions()
    lib.kareus_plan_options_init(ctypes.byref(options))
    options.methods = METHOD.encode()
    plan = ctypes.c_void_p()
    assert lib.kareus_plan_create_from_file(str(workload_path).encode(), ctypes.byref(options),
                                            ctypes.byref(plan)) == 0
    try:
        point, schedule, text = Point(), ctypes.c_void_p(), ctypes.c_void_p()
        method = METHOD.encode()
        if milp_nodes:
            refinement = Refinement()
            assert lib.kareus_plan_select_refined(plan, method, rule, ctypes.c_double(bound),
                                                  milp_nodes, ctypes.byref(point),
                                                  ctypes.byref(schedule),
                                                  ctypes.byref(refinement)) == 0
            assert refinement.improved == 1 and refinement.time_capped == 0
        else:
            assert lib.kareus_plan_select(plan, method, rule, ctypes.c_double(bound),
                                          ctypes.byref(point), ctypes.byref(schedule)) == 0
        assert lib.kareus_schedule_to_json(schedule, ctypes.byref(text)) == 0
        document = json.loads(ctypes.string_at(text).decode())
        lib.kareus_string_free(text)
        lib.kareus_schedule_free(schedule)
        return (point.time_s, point.energy_j), document
    finally:
        lib.kareus_plan_free(plan)


def same_everywhere(workload_path, tmp_path, flag, rule, c_rule, bound, milp_nodes=0):
    """The CLI's selected point, after checking every other front end gives it and its schedule:
    Python with the selection given to plan() and after it, and the C API."""
    point, schedule = cli(workload_path, tmp_path, flag, bound, milp_nodes)
    for other in (python(workload_path, rule, bound, at_plan=True, milp_nodes=milp_nodes),
                  python(workload_path, rule, bound, at_plan=False, milp_nodes=milp_nodes),
                  c_api(workload_path, c_rule, bound, milp_nodes)):
        assert other == (point, schedule)
    return point


def test_every_front_end_selects_the_same_polished_plan_by_deadline(workload_path, unpolished,
                                                                    tmp_path):
    fastest, slowest = unpolished[0].time_s, unpolished[-1].time_s
    deadline = fastest + 0.1 * (slowest - fastest)
    before = min((p for p in unpolished if p.time_s <= deadline), key=lambda p: p.energy_j)
    time_s, energy_j = same_everywhere(workload_path, tmp_path, "--deadline", "deadline_s",
                                       DEADLINE, deadline)
    # The polish finds a cheaper plan than the frontier had.
    assert time_s <= deadline and energy_j < before.energy_j


def test_every_front_end_selects_the_same_polished_plan_by_budget(workload_path, unpolished,
                                                                  tmp_path):
    budget = unpolished[len(unpolished) // 8].energy_j
    before = min((p for p in unpolished if p.energy_j <= budget), key=lambda p: p.time_s)
    time_s, energy_j = same_everywhere(workload_path, tmp_path, "--energy-budget",
                                       "energy_budget_j", BUDGET, budget)
    assert energy_j <= budget and time_s <= before.time_s


def test_a_later_selection_is_polished_from_the_frontier_as_solved(workload_path, unpolished,
                                                                   tmp_path):
    fastest, slowest = unpolished[0].time_s, unpolished[-1].time_s
    first, second = (fastest + f * (slowest - fastest) for f in (0.3, 0.1))
    planned = kareus.plan(kareus.Workload.from_file(workload_path), methods=[METHOD])
    planned[METHOD].select(deadline_s=first)
    later = planned[METHOD].select(deadline_s=second)
    alone, _ = cli(workload_path, tmp_path, "--deadline", second)
    # A selection depends on no selection made before it: the CLI's plan.
    assert (later.point.time_s, later.point.energy_j) == alone


def test_every_front_end_selects_the_same_refined_plan_by_deadline(workload_path, unpolished,
                                                                   tmp_path):
    fastest, slowest = unpolished[0].time_s, unpolished[-1].time_s
    deadline = fastest + 0.25 * (slowest - fastest)
    polished, _ = cli(workload_path, tmp_path, "--deadline", deadline)
    time_s, energy_j = same_everywhere(workload_path, tmp_path, "--deadline", "deadline_s",
                                       DEADLINE, deadline, milp_nodes=10)
    # CBC finds a cheaper plan than the polish within the deadline (and the C API said so).
    assert time_s <= deadline and energy_j < polished[1]
    _, _, summary = cli_run(workload_path, tmp_path, "--deadline", deadline, milp_nodes=10)
    refinement = summary["selected"]["milp_refinement"]
    assert refinement["max_nodes"] == 10 and refinement["improved"]
    assert not refinement["time_capped"] and refinement["time_s"] > 0
    planned = kareus.plan(kareus.Workload.from_file(workload_path), methods=[METHOD])
    record = planned[METHOD].select(deadline_s=deadline, milp_nodes=10).refinement
    assert record["max_nodes"] == 10 and record["improved"]
    assert planned[METHOD].select(deadline_s=deadline).refinement is None


def test_a_bad_node_limit_is_refused_by_every_front_end(workload_path):
    planned = kareus.plan(kareus.Workload.from_file(workload_path), methods=[METHOD])
    deadline = 1.1 * planned[METHOD].fastest().time_s
    with pytest.raises(kareus.Error, match="milp_nodes = -1"):
        planned[METHOD].select(deadline_s=deadline, milp_nodes=-1)
    with pytest.raises(kareus.Error, match="give a deadline"):
        planned[METHOD].select(energy_budget_j=planned[METHOD].fastest().energy_j, milp_nodes=3)
    with pytest.raises(kareus.Error, match="give a deadline"):
        kareus.plan(kareus.Workload.from_file(workload_path), methods=[METHOD], milp_nodes=3)
    lib = ctypes.CDLL(os.environ["KAREUS_C_LIBRARY"])
    lib.kareus_last_error.restype = ctypes.c_char_p
    plan = ctypes.c_void_p()
    assert lib.kareus_plan_create_from_file(str(workload_path).encode(), None,
                                            ctypes.byref(plan)) == 0
    try:
        point = Point()
        status = lib.kareus_plan_select_refined(plan, METHOD.encode(), DEADLINE,
                                                ctypes.c_double(deadline), -1,
                                                ctypes.byref(point), None, None)
        assert status != 0 and b"milp_nodes = -1" in lib.kareus_last_error()
    finally:
        lib.kareus_plan_free(plan)


def test_a_long_selection_lets_other_threads_run(tmp_path):
    """select() with milp_nodes runs CBC for as long as it needs (minutes on large plans): other
    Python threads must go on meanwhile (it releases the GIL), and a thread reading the same result
    sees the frontier as planned throughout. The ticker gets no tick into the middle half of the
    selection when the selection holds the GIL."""
    path = tmp_path / "workload.json"
    path.write_text(json.dumps({**WORKLOAD, "parallelism": {**WORKLOAD["parallelism"],
                                                            "microbatches": 32}}))
    method = kareus.plan(kareus.Workload.from_file(path), methods=[METHOD])[METHOD]
    planned = [(p.time_s, p.energy_j) for p in method.frontier]
    deadline = method.frontier[len(method.frontier) // 3].time_s
    ticks, frontiers, done = [], [], threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.005)

    def read():
        while not done.is_set():
            frontiers.append(method.frontier)

    others = [threading.Thread(target=tick), threading.Thread(target=read)]
    for thread in others:
        thread.start()
    try:
        began = time.monotonic()
        selected = method.select(deadline_s=deadline, milp_nodes=10)
        ended = time.monotonic()
    finally:
        done.set()
        for thread in others:
            thread.join()
    quarter = (ended - began) / 4
    assert any(began + quarter < t < ended - quarter for t in ticks), (ended - began, len(ticks))
    assert selected.point.time_s <= deadline
    for frontier in frontiers:
        assert [(p.time_s, p.energy_j) for p in frontier] == planned
