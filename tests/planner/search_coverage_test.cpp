// SPDX-License-Identifier: Apache-2.0
// The composition skips a clock at which any key has no measured point, so the
// `kareus` search must represent every clock the exhaustive iteration frontier uses.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "common/workloads.hpp"
#include "kareus/planner/planner.hpp"

namespace kareus::planner {
namespace {

// Clocks of the instruction options the frontier's plans choose.
std::set<double> frontier_clocks(const MethodResult& m) {
  std::set<double> clocks;
  for (const auto& point : m.frontier) {
    const auto assignment = m.solver.assignment(point.plan);
    for (std::size_t node = 0; node < assignment.size(); ++node) {
      const auto& option = m.option_sets[m.problem.option_set_of[node]][assignment[node]];
      clocks.insert(option.clock.value());
      for (MHz f : option.step_clocks) clocks.insert(f.value());
    }
  }
  return clocks;
}

TEST(SearchCoverage, EveryClockOfTheExhaustiveFrontierIsMeasuredOnEveryKey) {
  // CP2+TP4 on H100: its CP AllGather and ReduceScatter keys have 20 shapes at 27 clocks and a
  // cap of 42, less than screening every shape and covering every clock would take.
  for (const auto& [gpu, tp, cp] : {std::tuple{"a100-sxm4-40gb", 8, 1},
                                    std::tuple{"h100-sxm", 8, 1}, std::tuple{"h100-sxm", 4, 2}}) {
    const auto w = kareus::testing::llama3b(tp, cp, gpu);
    PlanOptions o;
    o.methods = {Method::kKareus, Method::kKareusExhaustive};
    o.seed = 1;
    const PlanResult r = plan(w, o);
    const std::set<double> needed = frontier_clocks(r.methods.at(Method::kKareusExhaustive));
    ASSERT_GT(needed.size(), 5u) << gpu;
    for (const auto& [key, result] : r.methods.at(Method::kKareus).key_frontiers) {
      std::set<double> measured;
      for (const auto& m : result.measured) measured.insert(m.config.clock.value());
      for (double f : needed) EXPECT_TRUE(measured.count(f)) << gpu << " " << key << " " << f;
    }
  }
}

}  // namespace
}  // namespace kareus::planner
