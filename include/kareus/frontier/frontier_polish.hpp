// SPDX-License-Identifier: Apache-2.0
// Polishing pipeline plans within a deadline. The min-cut steps price each instruction's duration
// on the lower convex hull of its options and map each step to the one measured option at that
// duration. Where the measured options are not convex (noisy energies, an option well above the
// hull between two cheap ones), that option can cost far more than the hull's linear price, while
// a mix of the segment's two ends over instructions on the same paths (some faster, some slower)
// meets the same iteration time for what the hull promised. The steps never revisit an instruction
// to find such mixes; the polish does, with the iteration time fixed as a deadline:
//  - every instruction is slowed to its cheapest option that fits its slack (reverse topological
//    order, so each keeps the room its successors leave it);
//  - pair moves: an instruction w goes to a cheaper, slower option it has no slack for, and a
//    partner u that shares its paths (its neighbours in its stage's 1F1B order, or the same
//    microbatch on any stage) goes to the cheapest faster option that frees the missing time,
//    when the pair saves energy and the longest path stays within the deadline;
//  - speed-ups, from the pair moves that did not fit (the partner is not on every longest path
//    through the instruction to slow): the partner goes to its faster option alone, every other
//    instruction is slowed into the room that leaves, and the result is kept when it saves energy
//    (the time one speed-up frees can pay a whole chain of slow-downs, where a pair move pays one);
// repeated until no move helps. It never returns a plan that is slower than the deadline (or than
// the input, when that is slower) or uses more energy than the input.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/frontier/pipeline_solver.hpp"

namespace kareus::frontier {

struct PolishOptions {
  int max_rounds = 16;       // rounds of (slow down, pair moves)
  int stage_neighbours = 4;  // partners before and after an instruction in its stage's order
  int most_speed_ups = 64;   // speed-ups tried per round (each a pass over the DAG); 0: none
};

// `plan`: per DAG node an index into its option set. The result's iteration time is at most
// max(deadline, the plan's) and its energy at most the plan's (the plan itself when no move saves
// energy). Throws kareus::Error on an inconsistent problem or plan (see evaluate_plan).
std::vector<int> polish_plan(const PipelineProblem& problem, std::vector<int> plan,
                             Seconds deadline, const PolishOptions& options = {});

// A frontier point's plan and the deadline to polish it at.
struct PolishTarget {
  std::size_t point;  // index into result.frontier
  Seconds deadline;
};

// Polishes the targets' plans (side by side, one per core); each polished plan that saves energy
// is added to `result` as a new plan and the frontier is pruned again, so no point gets slower or
// costlier. Adds to summary.polished_plans and summary.polish_seconds. Throws kareus::Error on a
// point out of range.
void polish_points(const PipelineProblem& problem, const std::vector<PolishTarget>& targets,
                   PipelineSolverResult& result, const PolishOptions& options = {});

// Polishes the fastest point and `points` others of `result`'s frontier: those furthest above the
// frontier's lower convex hull in relative energy (at least 1/(4 points) of its time span apart),
// each at its own time. The least energy within a deadline over mixed options is convex in the
// deadline, so a point well above its neighbours' hull marks where the steps' plans are furthest
// from what mixes reach; the fastest is the max-throughput selection. Nothing when points <= 0.
void polish_frontier(const PipelineProblem& problem, int points, PipelineSolverResult& result,
                     const PolishOptions& options = {});

// Faster frontier plans a selection polishes besides the one it picks: a search from another start
// can end in a better local optimum (on small random DAGs, with two more the brute-force optimum is
// met at 228 of 240 deadlines against 219 with the picked plan alone; frontier_polish_test).
inline constexpr int kSelectionNeighbours = 2;

// What a selection at `deadline` gets: the least-energy frontier plan within the deadline and the
// `neighbours` next faster ones, each polished at the deadline itself (which leaves them more room
// than their own times), added to `result` as polish_points adds them. Afterwards the least energy
// within the deadline on result.frontier is at most what it was, often less: a plan the frontier
// did not have. Nothing when no point meets the deadline.
void polish_within(const PipelineProblem& problem, Seconds deadline, int neighbours,
                   PipelineSolverResult& result, const PolishOptions& options = {});

// What a selection within an energy budget gets: the fastest frontier plan whose `cost` (the energy
// the budget bounds: the pipeline's own, or the whole job's for the planner) is within `budget`,
// and the `neighbours` next faster ones, each polished at its own time (a faster plan can come
// within the budget), added to `result` as polish_points adds them. Nothing when no point is
// within.
void polish_within_budget(const PipelineProblem& problem,
                          const std::function<Joules(const ParetoPoint&)>& cost, Joules budget,
                          int neighbours, PipelineSolverResult& result,
                          const PolishOptions& options = {});

}  // namespace kareus::frontier
