// SPDX-License-Identifier: Apache-2.0
// What both LPs of "least energy within deadline T" (DeadlineModel, FastEndLp) derive from a
// pipeline problem before building their columns: which options can be optimal, and how much of
// the deadline the rest of the DAG leaves each instruction.
#pragma once

#include <vector>

#include "kareus/frontier/pipeline_solver.hpp"

namespace kareus::frontier {

// The options of one set that can be optimal, fastest first. An option another one beats in both
// time and time-effective energy e - P t never is (swap it for that one: no path gets longer and
// the energy falls). In the LP relaxation only lower-convex-hull vertices carry weight: with
// `convexify`, only those (time strictly increasing, cost strictly decreasing, slopes increasing).
std::vector<int> candidate_options(const std::vector<ExecutionOption>& set, Watts p_blocking,
                                   bool convexify);

// Per node, the longest path through it with every node at `fastest` seconds, its own time
// excluded: an option longer than a deadline minus this can never be part of a plan within it.
std::vector<double> outside_paths(const PipelineProblem& problem,
                                  const std::vector<double>& fastest);

}  // namespace kareus::frontier
