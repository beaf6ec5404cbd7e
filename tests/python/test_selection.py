"""One selection everywhere: `kareus plan --deadline/--energy-budget`, the C API's
kareus_plan_select (through ctypes, on libkareus.so) and Python's select give the same polished
plan for the same request, whichever front end and whether the selection went to plan() or came
after it. Each selection must also be cheaper (or faster) than the unpolished frontier's, so a
front end that skipped the polish would fail here."""

import ctypes
import json
import os
import subprocess

import pytest

import kareus

WORKLOAD = {"model": "llama3.2-3b", "gpu": "a100-sxm4-40gb",
            "parallelism": {"tp": 8, "pp": 2, "microbatch_size": 8, "sequence_length": 4096,
                            "microbatches": 8, "recompute": "full"}}
METHOD = "perseus"
DEADLINE, BUDGET = 1, 2  # kareus_selection


class PlanOptions(ctypes.Structure):
    _fields_ = [("methods", ctypes.c_char_p), ("strategy", ctypes.c_char_p),
                ("seed", ctypes.c_uint64), ("store_path", ctypes.c_char_p),
                ("noise_sigma", ctypes.c_double), ("unit_time_s", ctypes.c_double)]


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


def cli(workload_path, tmp_path, flag, bound):
    out = tmp_path / "cli"
    done = subprocess.run([os.environ["KAREUS_BINARY"], "plan", "--workload", str(workload_path),
                           "--methods", METHOD, flag, repr(bound), "--json", "--quiet",
                           "--out", str(out)], capture_output=True, text=True, check=True)
    point = json.loads(done.stdout)["selected"]["point"]
    return (point["time_s"], point["energy_j"]), json.loads((out / "schedule.json").read_text())


def python(workload_path, rule, bound, at_plan):
    w = kareus.Workload.from_file(workload_path)
    planned = kareus.plan(w, methods=[METHOD], **({rule: bound} if at_plan else {}))
    point = planned[METHOD].select(**{rule: bound})
    return (point.time_s, point.energy_j), json.loads(planned.schedule(METHOD, point).to_json())


def c_api(workload_path, rule, bound):
    lib = ctypes.CDLL(os.environ["KAREUS_C_LIBRARY"])
    options = PlanOptions()
    lib.kareus_plan_options_init(ctypes.byref(options))
    options.methods = METHOD.encode()
    plan = ctypes.c_void_p()
    assert lib.kareus_plan_create_from_file(str(workload_path).encode(), ctypes.byref(options),
                                            ctypes.byref(plan)) == 0
    try:
        index, point = ctypes.c_size_t(), Point()
        method = METHOD.encode()
        assert lib.kareus_plan_select(plan, method, rule, ctypes.c_double(bound),
                                      ctypes.byref(index)) == 0
        assert lib.kareus_plan_frontier_point(plan, method, index, ctypes.byref(point)) == 0
        schedule, text = ctypes.c_void_p(), ctypes.c_void_p()
        assert lib.kareus_plan_schedule(plan, method, index, ctypes.byref(schedule)) == 0
        assert lib.kareus_schedule_to_json(schedule, ctypes.byref(text)) == 0
        document = json.loads(ctypes.string_at(text).decode())
        lib.kareus_string_free(text)
        lib.kareus_schedule_free(schedule)
        return (point.time_s, point.energy_j), document
    finally:
        lib.kareus_plan_free(plan)


def same_everywhere(workload_path, tmp_path, flag, rule, c_rule, bound):
    """The CLI's selected point, after checking every other front end gives it and its schedule:
    Python with the selection given to plan() and after it, and the C API."""
    point, schedule = cli(workload_path, tmp_path, flag, bound)
    for other in (python(workload_path, rule, bound, at_plan=True),
                  python(workload_path, rule, bound, at_plan=False),
                  c_api(workload_path, c_rule, bound)):
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
    # Never costlier than the CLI's plan; the same one unless the first selection's plans beat it.
    assert later.time_s <= second and later.energy_j <= alone[1]
