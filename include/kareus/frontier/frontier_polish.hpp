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
// repeated until no move helps. It never returns a plan that is slower than the deadline (or than
// the input, when that is slower) or uses more energy than the input.
#pragma once

#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/frontier/pipeline_solver.hpp"

namespace kareus::frontier {

struct PolishOptions {
  int max_rounds = 16;       // rounds of (slow down, pair moves)
  int stage_neighbours = 4;  // partners before and after an instruction in its stage's order
};

// `plan`: per DAG node an index into its option set. The result's iteration time is at most
// max(deadline, the plan's) and its energy at most the plan's (the plan itself when no move saves
// energy). Throws kareus::Error on an inconsistent problem or plan (see evaluate_plan).
std::vector<int> polish_plan(const PipelineProblem& problem, std::vector<int> plan,
                             Seconds deadline, const PolishOptions& options = {});

// Polishes `result`'s frontier at `deadlines` iteration times evenly spaced from its fastest time
// towards its least-energy one, fastest first: at each, the least-energy frontier plan within it
// (or the previous deadline's polished plan when that is cheaper) is polished, and kept as a new
// plan of `result` when it saves energy. The frontier is pruned again, so points the new plans
// dominate are dropped: no point gets slower or costlier. Updates summary.polished_plans.
void polish_frontier(const PipelineProblem& problem, int deadlines, PipelineSolverResult& result,
                     const PolishOptions& options = {});

}  // namespace kareus::frontier
