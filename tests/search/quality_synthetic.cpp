// SPDX-License-Identifier: Apache-2.0
// Quality comparison of the strategies on synthetic partition-like problems (not a test: it prints
// a markdown table). Per shape, medians over five seeds of the number of measurements and of the
// hypervolume of the measured points as a fraction of the exhaustive frontier's. The issue's
// target for `kareus` (99 % with at most half of paper's measurements) is stated for the real
// partitions; run this to see where the synthetic ones stand.
#include <algorithm>

#include <fmt/format.h>

#include "kareus/core/table.hpp"

#include "kareus/search/hypervolume.hpp"
#include "kareus/search/search.hpp"
#include "synthetic_problem.hpp"

namespace kareus::search {
namespace {

using testing::SyntheticProblem;
using testing::SyntheticShape;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct Outcome {
  double measurements;
  double hv_fraction;
};

Outcome run(const SyntheticShape& shape, Strategy strategy) {
  std::vector<double> counts;
  std::vector<double> fractions;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    SyntheticProblem problem(shape);
    SearchOptions options;
    options.strategy = strategy;
    options.seed = seed;
    const SearchResult r = run_search(problem, options);
    counts.push_back(static_cast<double>(r.measured.size()));
    fractions.push_back(testing::hv_fraction(r, problem));
  }
  return {median(counts), median(fractions)};
}

}  // namespace
}  // namespace kareus::search

int main() {
  using namespace kareus::search;
  // Shapes of the spec's partition table: slots x compute ops (small, medium, large) and sizes of
  // compute and communication, each with its own workload constants.
  const SyntheticShape shapes[] = {
      {1, 1, 0.8e-3, 24e6, 0.005, 11}, {2, 1, 0.6e-3, 40e6, 0.005, 12},
      {2, 2, 1.5e-3, 32e6, 0.005, 13}, {3, 3, 1.0e-3, 64e6, 0.005, 14},
      {3, 4, 2.5e-3, 48e6, 0.005, 15}, {4, 5, 3.0e-3, 96e6, 0.005, 16}};
  kareus::TextTable table({"configs", "size class", "paper meas.", "paper HV", "kareus meas.",
                           "kareus HV", "kareus/paper meas."});
  for (const SyntheticShape& shape : shapes) {
    const Outcome paper = run(shape, Strategy::kPaper);
    const Outcome ours = run(shape, Strategy::kKareus);
    table.add_row({std::to_string(SyntheticProblem(shape).size()),
                   to_string(size_class_of(shape.compute_ops)),
                   fmt::format("{}", paper.measurements), fmt::format("{:.4f}", paper.hv_fraction),
                   fmt::format("{}", ours.measurements), fmt::format("{:.4f}", ours.hv_fraction),
                   fmt::format("{:.2f}", ours.measurements / paper.measurements)});
  }
  fmt::print("{}", table.render_markdown());
  return 0;
}
