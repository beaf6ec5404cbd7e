// SPDX-License-Identifier: Apache-2.0
// Which configurations are one step apart in the raw encoding, for the `kareus` strategy's local
// moves along the frontier.
#pragma once

#include <vector>

#include "kareus/search/problem.hpp"

namespace kareus::search {

// For every id, the ids whose raw features differ from it in at most two columns, each by one
// step among that column's distinct values: the next clock, the next SM count, another one-hot
// launch slot, or two of those at once.
std::vector<std::vector<std::size_t>> raw_neighbours(const Problem& problem);

// For every id, the ids that differ from it only in the clock (raw feature 0), by one step.
std::vector<std::vector<std::size_t>> clock_neighbours(const Problem& problem);

}  // namespace kareus::search
