// DeadlineModel's LP relaxation (convexified options: the least convex piecewise-linear cost of
// the durations under the precedence constraints and a makespan bound) solved as what it is, an
// optimal tension problem, through its dual, a min-cost flow, by LEMON's network simplex. The
// optimum is the LP's; the pipeline solver's fast end rounds its durations.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/frontier/pipeline_solver.hpp"

namespace kareus::frontier {

// LEMON's pivot rules, in its order (NetworkSimplex::PivotRule). The durations returned do not
// depend on the rule (see relaxed_durations); tests choose others to check that.
enum class FlowPivotRule {
  first_eligible,
  best_eligible,
  block_search,
  candidate_list,
  altering_list
};

class DeadlineFlow {
 public:
  explicit DeadlineFlow(const PipelineProblem& problem,
                        FlowPivotRule pivot_rule = FlowPivotRule::block_search);
  ~DeadlineFlow();
  DeadlineFlow(const DeadlineFlow&) = delete;
  DeadlineFlow& operator=(const DeadlineFlow&) = delete;

  // As DeadlineModel::set_deadline: the makespan bound, and every instruction limited to its hull
  // vertices that fit in what the rest of the DAG at its fastest leaves of the deadline.
  void set_deadline(Seconds deadline);
  // Per node, its duration in seconds at the optimum whose start and finish times are all the
  // earliest any optimum has (one optimum, whichever vertex the pivots end at); nullopt when no
  // plan meets the deadline.
  std::optional<std::vector<double>> relaxed_durations();
  // The last solve's optimum, the convexified iteration energy in joules (as
  // DeadlineModel::relaxed_objective).
  double objective() const;

 private:
  struct Network;
  std::unique_ptr<Network> network_;
};

}  // namespace kareus::frontier
