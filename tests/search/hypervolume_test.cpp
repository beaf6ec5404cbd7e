// SPDX-License-Identifier: Apache-2.0
#include "kareus/search/hypervolume.hpp"

#include <gtest/gtest.h>
#include <pagmo/utils/hypervolume.hpp>

#include "kareus/core/rng.hpp"

namespace kareus::search {
namespace {

TEST(Hypervolume, HandCases) {
  EXPECT_DOUBLE_EQ(hypervolume_2d({}, {1, 1}), 0.0);
  EXPECT_DOUBLE_EQ(hypervolume_2d({{0, 0}}, {1, 1}), 1.0);
  // Two steps: [1,3]x[2,3] + [2,3]x[1,2] = 2 + 1.
  EXPECT_DOUBLE_EQ(hypervolume_2d({{1, 2}, {2, 1}}, {3, 3}), 3.0);
  // A dominated point and a duplicate change nothing.
  EXPECT_DOUBLE_EQ(hypervolume_2d({{1, 2}, {2, 1}, {2.5, 2.5}, {1, 2}}, {3, 3}), 3.0);
  // Points outside the reference box contribute nothing.
  EXPECT_DOUBLE_EQ(hypervolume_2d({{4, 0}, {0, 3}}, {3, 3}), 0.0);
}

TEST(Hypervolume, ParetoIndicesSortedByX) {
  const std::vector<Point2> points{{3, 1}, {1, 3}, {2, 2}, {2, 3}, {1, 3}};
  EXPECT_EQ(pareto_indices(points), (std::vector<std::size_t>{1, 2, 0}));
}

TEST(Hypervolume, MatchesPagmoOnRandomSets) {
  Rng rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const auto n = static_cast<std::size_t>(rng.integer(1, 60));
    std::vector<Point2> points;
    std::vector<pagmo::vector_double> pagmo_points;
    for (std::size_t i = 0; i < n; ++i) {
      const Point2 p{rng.uniform(0, 10), rng.uniform(0, 5)};
      points.push_back(p);
      pagmo_points.push_back({p.x, p.y});
    }
    const Point2 ref{10.5, 5.5};
    const double expected = pagmo::hypervolume(pagmo_points).compute({ref.x, ref.y});
    EXPECT_NEAR(hypervolume_2d(points, ref), expected, 1e-9 * expected) << "trial " << trial;
  }
}

TEST(Hypervolume, ImprovementMatchesDifferenceOfHypervolumes) {
  Rng rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Point2> points;
    const auto n = static_cast<std::size_t>(rng.integer(0, 20));
    for (std::size_t i = 0; i < n; ++i) points.push_back({rng.uniform(0, 1), rng.uniform(0, 1)});
    const Point2 ref{1.1, 1.1};
    const Front2 front(points, ref);
    const Point2 p{rng.uniform(-0.1, 1.2), rng.uniform(-0.1, 1.2)};
    auto with = points;
    with.push_back(p);
    EXPECT_NEAR(front.improvement(p), hypervolume_2d(with, ref) - hypervolume_2d(points, ref),
                1e-12)
        << "trial " << trial;
  }
}

}  // namespace
}  // namespace kareus::search
