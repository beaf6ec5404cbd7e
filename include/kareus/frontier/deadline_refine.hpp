// SPDX-License-Identifier: Apache-2.0
// A plan within a deadline refined by exact sub-MILPs (a large-neighbourhood search, "fix and
// optimise"): windows of instructions that run at about the same time are freed one at a time,
// everything else keeps its option, and CBC solves the exact "least energy within the deadline"
// MILP (DeadlineModel, not convexified) over the window's options, starting from the current
// plan as its incumbent, for at most a given number of branch-and-bound nodes. The whole-problem
// MILP at 200-1,300 instructions x 60 options finds some cheaper mixes within few nodes but
// misses others that windows of 64 find (and the other way round), so `--milp-nodes` runs both
// (docs/benchmarks/pipeline_solver.md at commit a64c35e, "Windows of instructions"). Node and
// window limits, not time, bound the work, so the same problem and plan give the same result run
// after run (CBC runs single-threaded); a generous time cap per CBC solve guards only against a
// pathological case and is reported when it was hit, since a plan found under it may differ
// between runs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/frontier/pipeline_solver.hpp"

namespace kareus::frontier {

// Seconds of CBC time after which one solve stops whatever its node limit (see above).
inline constexpr double kRefineSafetySeconds = 600.0;

struct DeadlineRefinement {
  std::vector<int> assignment;  // per node, an index into its option set
  PlanCost cost;                // evaluate_plan of `assignment`
  bool improved = false;        // CBC found a cheaper plan within the deadline
  bool time_capped = false;     // a CBC solve stopped at kRefineSafetySeconds, not the node limit
  double seconds = 0.0;         // wall time: the models' builds, any wait for another CBC solve,
                                // the branch and cut
  int solves = 0;               // CBC solves, one per window tried
  int sweeps = 0;               // passes over the windows
};

// The least-energy plan within `deadline` that changes only the nodes flagged in `movable`, every
// other one keeping its option in `plan` (a plan within the deadline): the exact MILP over the
// movable nodes' options, the deadline on the whole DAG, solved by CBC from `plan` within
// `max_nodes` nodes, with CBC's preprocessing on or off (`preprocess`). nullopt when CBC returns
// no plan. Throws kareus::Error when `plan` or `movable` does not fit the problem or `plan` misses
// the deadline.
struct WindowPlan {
  std::vector<int> assignment;  // per node, an index into its option set
  bool proven = false;          // optimal over the window (to CBC's default gap tolerances)
  bool time_capped = false;     // CBC stopped at kRefineSafetySeconds, not at the node limit
};
std::optional<WindowPlan> best_in_window(const PipelineProblem& problem,
                                         const std::vector<int>& plan, Seconds deadline,
                                         const std::vector<char>& movable, int max_nodes,
                                         bool preprocess = true);

// Large-neighbourhood search from a plan within the deadline (fix-and-optimise): the instructions
// in the plan's earliest-start order are cut into windows of `window` consecutive ones (each
// overlapping the next by half); per window, every instruction outside it keeps its option and
// CBC solves the exact MILP over the window's options (the deadline on the whole DAG) within
// `max_nodes` nodes. A cheaper plan within the deadline replaces the current one at once. Sweeps
// over the windows (the order recomputed from the current plan before each) repeat until one
// lowers the energy by less than `min_sweep_gain` of what it was before that sweep (or not at
// all), or `max_solves` windows were solved. Node, gain and solve limits, not time, bound the
// work, so the result is the same every run.
//
// 1e-4 of the energy (2 J of an A40 GPT-3 x 24 iteration's 21 000) is a hundredth of the gains the
// refinement is for, so a sweep that gains less is not worth its time again; on a pipeline of more
// than 40 windows (Llama 3.3 70B dp8: 1,280 instructions) the solve limit ends the first sweep.
inline constexpr double kMinSweepGain = 1e-4;

// What a refinement reports while it works: after the whole-problem MILP, after each window and
// once more at the end of each sweep, so a front end can show a long refinement move.
struct RefineProgress {
  int sweep = 0;            // 0: the whole-problem MILP; the window sweeps count from 1
  int solves = 0;           // CBC solves so far, the whole MILP's included
  bool sweep_done = false;  // the last report of the whole MILP or of this sweep
  Joules start{0.0};        // the plan's energy before the refinement
  Joules energy{0.0};       // the best plan's energy so far
};
using RefineProgressFn = std::function<void(const RefineProgress&)>;

// One line for a person: "MILP refinement: sweep 2 done, 23 CBC solves, 20360.1 J (-1.30 %)".
std::string refine_progress_line(const RefineProgress& progress);

struct WindowSearch {
  int window = 64;
  int max_nodes = 10;
  int max_solves = 40;
  double min_sweep_gain = kMinSweepGain;  // a fraction of the energy, >= 0
  bool preprocess = true;                 // CBC's preprocessing in the windows' solves
  RefineProgressFn on_progress;           // optional
};

// Never costlier than `plan`, never later than `deadline` (both as evaluate_plan measures them);
// with one window over every instruction and room for the whole branch and cut, the exact
// optimum. Throws kareus::Error when `plan` does not fit the problem or misses the deadline, or a
// limit is not positive or `min_sweep_gain` is negative.
DeadlineRefinement refine_in_windows(const PipelineProblem& problem, const std::vector<int>& plan,
                                     Seconds deadline, const WindowSearch& search);

// A portfolio of two window searches from the same plan: `search` with CBC's preprocessing on,
// then the same with it off (search.preprocess is not read), and the cheaper of the two plans
// (on's on a tie). Within few nodes each setting finds mixes the other misses on the A40 profiles,
// and neither search sees the other's plans, so the result is never costlier than either alone
// (docs/benchmarks/pipeline_solver.md at commit a64c35e, "The last cell"). The limits hold per
// search: up to twice search.max_solves CBC solves. Progress reports continue across both: the
// second search's sweeps count on from the first's, its energy is the best of either so far.
DeadlineRefinement refine_in_windows_both(const PipelineProblem& problem,
                                          const std::vector<int>& plan, Seconds deadline,
                                          const WindowSearch& search);

// What `--milp-nodes N` runs: the whole-problem MILP from `plan` within `max_nodes` nodes (0: its
// root node only), then, on a pipeline of more than WindowSearch::window instructions,
// refine_in_windows_both from the result with the default WindowSearch but `max_nodes` nodes per
// window; `on_progress` (optional) hears both. Never costlier than `plan`, never later than
// `deadline` (both as evaluate_plan measures them). Throws kareus::Error when `plan` does not fit
// the problem or misses the deadline, or `max_nodes` is negative.
DeadlineRefinement refine_within_deadline(const PipelineProblem& problem,
                                          const std::vector<int>& plan, Seconds deadline,
                                          int max_nodes, const RefineProgressFn& on_progress = {});

// Adds `refinement`'s plan to `result` as its newest plan (the options that change from the plan
// before it) and its point to the frontier, pruned as ParetoSet::insert prunes; returns the plan's
// index. For a refinement that improved: its plan is then one the selection can pick.
std::uint32_t add_refined_plan(const DeadlineRefinement& refinement, PipelineSolverResult& result);

}  // namespace kareus::frontier
