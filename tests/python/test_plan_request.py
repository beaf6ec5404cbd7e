# SPDX-License-Identifier: Apache-2.0
"""Every field of the planner's request is reachable from kareus.plan(): each argument set away
from its default shows in the request the plan ran (PlanResult.request). The fields come from the
library (kareus.PLAN_REQUEST_FIELDS), so a field the request gains and plan() lacks fails here."""

import kareus


def test_every_field_of_the_plan_request_is_reachable():
    workload = kareus.Workload("qwen3-1.7b", "a100-sxm4-40gb", pp=2, microbatches=4,
                               sequence_length=2048)
    defaults = kareus.plan(workload, methods=["megatron"]).request
    common = dict(methods=["perseus"], strategy="paper", seed=7, noise_sigma=0.01,
                  unit_time_s=0.002, clock_granularity="partition", switch_latency_s=0.002,
                  enforceable="clocks")
    reached = set()
    for selection in (dict(deadline_s=1000.0, milp_nodes=1), dict(energy_budget_j=1e9)):
        result = kareus.plan(workload, **common, **selection)
        reached |= {field for field, value in result.request.items()
                    if defaults.get(field) != value}
        assert result.selected.method == "perseus"
    assert reached == set(kareus.PLAN_REQUEST_FIELDS)
