// SPDX-License-Identifier: Apache-2.0
#include "neighbours.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace kareus::search {

namespace {

// Rank of each raw feature among its column's distinct values, so "one step" is a rank
// difference of 1.
std::vector<std::vector<long>> feature_ranks(const Problem& problem) {
  const std::size_t n = problem.size();
  std::vector<std::vector<double>> rows(n);
  for (std::size_t id = 0; id < n; ++id) rows[id] = problem.raw_features(id);
  const std::size_t columns = n == 0 ? 0 : rows.front().size();
  std::vector<std::vector<long>> rank(n, std::vector<long>(columns));
  for (std::size_t c = 0; c < columns; ++c) {
    std::vector<double> values;
    for (const auto& row : rows) values.push_back(row[c]);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    for (std::size_t id = 0; id < n; ++id) {
      rank[id][c] = std::lower_bound(values.begin(), values.end(), rows[id][c]) - values.begin();
    }
  }
  return rank;
}

}  // namespace

std::vector<std::vector<std::size_t>> raw_neighbours(const Problem& problem) {
  const std::size_t n = problem.size();
  const std::vector<std::vector<long>> rank = feature_ranks(problem);
  const std::size_t columns = n == 0 ? 0 : rank.front().size();
  std::vector<std::vector<std::size_t>> out(n);
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = a + 1; b < n; ++b) {
      std::size_t differing = 0;
      bool adjacent = true;
      for (std::size_t c = 0; c < columns && adjacent && differing <= 2; ++c) {
        const long step = std::labs(rank[a][c] - rank[b][c]);
        if (step == 0) continue;
        ++differing;
        adjacent = step == 1;
      }
      if (adjacent && differing > 0 && differing <= 2) {
        out[a].push_back(b);
        out[b].push_back(a);
      }
    }
  }
  return out;
}

std::vector<std::vector<std::size_t>> clock_neighbours(const Problem& problem) {
  const std::vector<std::vector<long>> rank = feature_ranks(problem);
  std::map<std::vector<long>, std::map<long, std::size_t>> by_rest;
  for (std::size_t id = 0; id < rank.size(); ++id) {
    const std::vector<long> rest(rank[id].begin() + 1, rank[id].end());
    by_rest[rest][rank[id][0]] = id;
  }
  std::vector<std::vector<std::size_t>> out(rank.size());
  for (const auto& [rest, by_clock] : by_rest) {
    for (const auto& [clock, id] : by_clock) {
      for (const long step : {-1L, 1L}) {
        if (const auto it = by_clock.find(clock + step); it != by_clock.end()) {
          out[id].push_back(it->second);
        }
      }
    }
  }
  return out;
}

}  // namespace kareus::search
