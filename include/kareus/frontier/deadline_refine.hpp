// A plan within a deadline refined by a bounded branch and cut: CBC solves the exact "least
// energy within the deadline" MILP (DeadlineModel, not convexified) starting from the plan as its
// incumbent, for at most a given number of branch-and-bound nodes. The node limit, not a time
// limit, bounds the work, so the same problem and plan give the same result run after run (CBC runs
// single-threaded); a generous time cap guards only against a pathological case and is reported
// when it was hit, since a plan found under it may differ between runs.
#pragma once

#include <cstdint>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/frontier/pipeline_solver.hpp"

namespace kareus::frontier {

// Seconds of CBC time after which a refinement stops whatever its node limit (see above).
inline constexpr double kRefineSafetySeconds = 600.0;

struct DeadlineRefinement {
  std::vector<int> assignment;  // per node, an index into its option set
  PlanCost cost;                // evaluate_plan of `assignment`
  bool improved = false;        // CBC found a cheaper plan within the deadline
  bool time_capped = false;     // CBC stopped at kRefineSafetySeconds, not at the node limit
  double seconds = 0.0;         // wall time: the model's build, any wait for another CBC solve,
                                // the branch and cut
};

// The plan CBC finds from `plan` within `max_nodes` nodes (0: the root node's cuts and heuristics
// only), or `plan` itself when that is not cheaper: never costlier than `plan`, never later than
// `deadline` (both as evaluate_plan measures them). Throws kareus::Error when `plan` does not fit
// the problem or misses the deadline, or `max_nodes` is negative.
DeadlineRefinement refine_within_deadline(const PipelineProblem& problem,
                                          const std::vector<int>& plan, Seconds deadline,
                                          int max_nodes);

// Adds `refinement`'s plan to `result` as its newest plan (the options that change from the plan
// before it) and its point to the frontier, pruned as ParetoSet::insert prunes; returns the plan's
// index. For a refinement that improved: its plan is then one the selection can pick.
std::uint32_t add_refined_plan(const DeadlineRefinement& refinement, PipelineSolverResult& result);

}  // namespace kareus::frontier
