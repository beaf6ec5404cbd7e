// SPDX-License-Identifier: Apache-2.0
// The realised frontier (kareus/planner/realised.hpp): each plan re-run at its options' true
// values. Without noise that is the frontier itself; with noise the reported frontier is
// optimistic (the composition picks lucky readings) and the realised one is not better than what
// the same composition makes of the true values.
#include <gtest/gtest.h>

#include "common/workloads.hpp"
#include "kareus/planner/realised.hpp"
#include "kareus/search/hypervolume.hpp"

namespace kareus::planner {
namespace {

std::vector<search::Point2> points_of(const std::vector<IterationPoint>& frontier) {
  std::vector<search::Point2> out;
  for (const auto& p : frontier) out.push_back({p.time.value(), p.energy.value()});
  return out;
}

search::Point2 past_all(const std::vector<std::vector<IterationPoint>>& fronts) {
  search::Point2 ref{0, 0};
  for (const auto& f : fronts) {
    for (const auto& p : f) {
      ref = {std::max(ref.x, 1.01 * p.time.value()), std::max(ref.y, 1.01 * p.energy.value())};
    }
  }
  return ref;
}

TEST(RealisedFrontier, NoiseFreeReadingsRealiseTheFrontierItself) {
  for (int cp : {1, 2}) {
    const auto w = kareus::testing::llama3b(8 / cp, cp);
    PlanOptions o;
    o.methods = {Method::kKareus};
    o.seed = 1;
    const MethodResult m = plan(w, o).methods.at(Method::kKareus);
    const auto realised = realised_frontier(w, m);
    ASSERT_EQ(realised.size(), m.frontier.size()) << "cp " << cp;
    for (std::size_t i = 0; i < realised.size(); ++i) {
      EXPECT_EQ(realised[i].plan, m.frontier[i].plan);
      EXPECT_NEAR(realised[i].time.value(), m.frontier[i].time.value(),
                  1e-9 * m.frontier[i].time.value());
      EXPECT_NEAR(realised[i].energy.value(), m.frontier[i].energy.value(),
                  1e-9 * m.frontier[i].energy.value());
      EXPECT_NEAR(realised[i].dynamic_energy.value(), m.frontier[i].dynamic_energy.value(),
                  1e-9 * m.frontier[i].dynamic_energy.value());
    }
  }
}

TEST(RealisedFrontier, UnderNoiseTheReportedFrontierIsOptimisticAndTheRealisedOneIsNot) {
  const auto w = kareus::testing::llama3b(4, 2);
  PlanOptions o;
  o.methods = {Method::kKareusExhaustive};
  const MethodResult exact = plan(w, o).methods.at(Method::kKareusExhaustive);
  o.noise_sigma = 0.03;
  o.seed = 3;
  const MethodResult noisy = plan(w, o).methods.at(Method::kKareusExhaustive);
  const auto realised = realised_frontier(w, noisy);
  const auto ref = past_all({exact.frontier, noisy.frontier, realised});
  const double hv_exact = search::hypervolume_2d(points_of(exact.frontier), ref);
  const double hv_reported = search::hypervolume_2d(points_of(noisy.frontier), ref);
  const double hv_realised = search::hypervolume_2d(points_of(realised), ref);
  // Every configuration was read once, and each option keeps the lowest readings: the reported
  // frontier looks better than the truth allows, the realised one does not.
  EXPECT_GT(hv_reported, hv_exact);
  EXPECT_LT(hv_realised, hv_reported);
  // The pipeline solver is exact at the ends and a heuristic between, hence the small margin.
  EXPECT_LE(hv_realised, hv_exact * (1 + 1e-3));
  EXPECT_GE(realised.front().time.value(), exact.fastest().time.value() * (1 - 1e-9));
}

}  // namespace
}  // namespace kareus::planner
