// SPDX-License-Identifier: Apache-2.0
// Iteration time-energy frontier of a pipeline DAG, Perseus style: every instruction runs one of
// its measured options (a clock); iteration time is the longest path (with a fixed transfer delay
// on every edge between stages, when the problem has one); iteration energy is
//   sum of the instructions' energy + P_blocking x (stages x time - sum of the instructions' time),
// since a GPU that idles or blocks on P2P still draws P_blocking.
//
// The solver starts from the least-energy option everywhere and shortens the critical path one
// time unit per step at the least energy increase, by a minimum cut over the critical subgraph
// (Phillips-Dessouky 1977, as in Perseus's lowtime), until no critical path can get shorter.
// What it guarantees:
//  - Each instruction's options are quantised to ceil(time / unit) and the min-cut steps run on
//    the lower convex hull of (quantised time, time-effective energy); unit-step Phillips-Dessouky
//    is exact for such convex separable costs. Each step's durations are mapped back to the
//    slowest measured option that fits, every instruction is then slowed to its cheapest option
//    that fits in its slack (the time stays, the energy can only fall), and every reported point is
//    the real, measured time and energy of that plan (real time <= planned time), pruned to its
//    Pareto set.
//  - When every option lies on its instruction's hull and its time is a multiple of the unit, the
//    frontier equals the brute-force Pareto set over all option assignments. Otherwise (non-convex
//    measured options) it is a heuristic; tests/frontier bound its hypervolume gap to brute force.
//  - Rounding up to whole units leaves a gap between the fastest step and the fastest plan (every
//    instruction at its fastest option). There, at each unit from the fastest time, the plan is
//    the LP relaxation of "least energy within the deadline" (FastEndLp) rounded down to
//    measured options and slowed where slack allows, so the fastest point is not the wasteful
//    all-fastest plan; tests/frontier/fast_end_test.cpp checks it against brute force and the MILP.
//  - The steps make one plan per time unit and never revisit an instruction, so where measured
//    options are not convex they miss mixes (some instructions faster, some slower on the same
//    paths) that meet a time for less. At the fastest time and `polish_points` others across the
//    frontier a local search with the time fixed looks for them (frontier_polish.hpp); the plans it
//    finds are added and the frontier pruned again, so no point gets slower or costlier.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/frontier/pareto.hpp"
#include "kareus/workload/pipeline.hpp"

namespace kareus::frontier {

struct ExecutionOption {
  Seconds time;
  Joules energy;
};

struct PipelineProblem {
  workload::PipelineDag dag;
  // Options shared by many instructions (all microbatches of a stage and direction, typically).
  std::vector<std::vector<ExecutionOption>> option_sets;
  std::vector<int> option_set_of;  // per DAG node, an index into option_sets
  Watts p_blocking{0.0};           // per GPU; one GPU per stage
  // Delay on every DAG edge between stages: the P2P transfer of an activation or its gradient,
  // which no clock changes. Zero is Perseus's convention (its profiles carry no transfer times).
  Seconds transfer{0.0};
};

// Bounded work: the steps run from the least-energy plan's iteration time down, one time unit
// each, so the solver refuses (kareus::Error) a problem whose least-energy iteration, or any one
// option, is longer than this many time units.
inline constexpr std::int64_t kMaxPipelineSolverSteps = 1'000'000;

// At most this many LP solves refine the frontier below the fastest min-cut step (see .cpp).
inline constexpr int kFastEndDeadlines = 64;

// Where a solve stands, for a front end's progress line. The min-cut steps shorten the iteration
// one time unit each, from the least-energy plan's down to the iteration with every instruction at
// its fastest option (the longest path of fastest options), so their number is known before they
// start; the fast end and the polish that follow are short and counted as phases only.
struct PipelineSolverProgress {
  enum class Phase { kSteps, kFastEnd, kPolish };
  Phase phase = Phase::kSteps;
  std::int64_t units_shortened = 0;  // by the steps so far, of units_to_shorten
  std::int64_t units_to_shorten = 0;
  // The steps' share done, in [0, 1]; 1 once they are over.
  double steps_fraction() const;
};
using PipelineSolverProgressFn = std::function<void(const PipelineSolverProgress&)>;

struct PipelineSolverOptions {
  Seconds unit_time = milliseconds(1);
  // Keep one flow network between steps, change only the bounds a step changes and start each
  // max flow from the previous step's. The frontier does not depend on it (see
  // MinCutSolver::min_cut); false builds each step's critical network and solves its max flow from
  // scratch, for comparison.
  bool warm_start = true;
  // Take the unit steps that provably share one minimum cut (no hull breakpoint crossed, every
  // critical path one unit shorter per step, no other path reaching the critical length) in one go,
  // without rebuilding the critical network in between. Same steps and plans; false takes them one
  // by one, for comparison.
  bool multi_unit_steps = true;
  // 2: a second thread measures each min-cut step's plan while the next step is taken (same
  // results; about 40 % of the steps' work moves off the critical thread). 1: all on the caller's.
  int threads = 2;
  // With threads > 1, the fast end's LPs are solved on a third thread during the steps and the
  // thread stops when the steps end (same results: the fast end solves what is left). False lets
  // it finish first, so that tests see its plans taken whatever the timing.
  bool fast_end_stops_with_the_steps = true;
  // Polish this many frontier points, those furthest above the frontier's lower convex hull, and
  // the fastest (frontier_polish.hpp): a local search with the time fixed that mixes options the
  // steps' convex prices cannot see. 0: off.
  int polish_points = 6;
  // Called on the caller's thread as the steps advance (at most every 0.1 s, and as they start)
  // and once as each later phase starts. Optional.
  PipelineSolverProgressFn on_progress = nullptr;
};

struct PlanCost {
  Seconds time;
  Joules energy;
};

// Real time and energy of a plan: `assignment` holds per DAG node an index into its option set.
PlanCost evaluate_plan(const PipelineProblem& problem, const std::vector<int>& assignment);
// Each node's earliest start under `assignment`, as evaluate_plan times the plan (the longest
// path into it, the transfer on every edge between stages).
std::vector<Seconds> plan_start_times(const PipelineProblem& problem,
                                      const std::vector<int>& assignment);

struct PipelineSolverSummary {
  int steps = 0;             // min-cut steps taken
  int min_cuts = 0;          // max-flow solves: a step whose network did not change reuses the cut
  int fallback_steps = 0;    // steps where lengthening off-critical work was undone (see .cpp)
  int multi_unit_steps = 0;  // runs of steps taken on one cut without rebuilding the network
  int fast_end_plans = 0;    // plans from the LP relaxation between the fastest step and plan
  double mean_critical_nodes = 0.0;
  Seconds unit_time{0};                    // the time unit the *_units fields count in
  std::int64_t planned_slowest_units = 0;  // longest path in time units at the start
  std::int64_t planned_fastest_units = 0;  // ... when no critical path could be shortened
  // Of solve_seconds, in the fast-end LP plans after the steps: with threads > 1 their LPs were
  // solved during the steps when the fastest step measured the least step time (see .cpp), and
  // the rest is waiting for them, rounding and measuring.
  double fast_end_seconds = 0.0;
  int polished_plans = 0;       // plans from polish_frontier, after the fast end's
  double polish_seconds = 0.0;  // of solve_seconds, in polish_frontier
  double solve_seconds = 0.0;
  std::string to_string() const;
};

struct OptionChange {
  int node = 0;
  int option = 0;
};

struct PipelineSolverResult {
  // Real (time, energy) of the plans, Pareto-pruned; a point's `first` is its plan's index. Plan 0
  // is the start, plan k the k-th min-cut step, plan steps + 1 runs every instruction at its
  // fastest option (quantisation can hide it from the steps), each slowed where slack allows, and
  // the fast_end_plans plans after it are the fast-end LP plans, fastest deadline first, and the
  // polished_plans plans after those the polished ones (see polish_frontier), fastest first.
  ParetoSet frontier;
  std::vector<int> initial_assignment;             // plan 0: per node, an index into its option set
  std::vector<std::vector<OptionChange>> changes;  // changes[k]: from plan k - 1 to plan k
  PipelineSolverSummary summary;

  // Plan `index`, replayed from the initial assignment.
  std::vector<int> assignment(std::uint32_t index) const;
  // Several plans in one replay (indices in any order; result in the same order).
  std::vector<std::vector<int>> assignments(const std::vector<std::uint32_t>& indices) const;
};

// A time unit with which `problem` keeps within kMaxPipelineSolverSteps (every option, the
// transfer and the least-energy iteration): the bound's smallest unit up to a rounding margin of
// two units per instruction, so a front end can name the unit its user should give.
Seconds smallest_unit_time(const PipelineProblem& problem);

// Throws kareus::Error on an inconsistent problem (option set sizes, non-positive times, a cyclic
// DAG, negative blocking power), a non-positive unit time or more than kMaxPipelineSolverSteps
// time units (see there).
PipelineSolverResult solve_pipeline(const PipelineProblem& problem,
                                    const PipelineSolverOptions& options = {});

}  // namespace kareus::frontier
