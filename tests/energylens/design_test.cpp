// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/design.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "kareus/core/error.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/energylens/evaluate.hpp"
#include "synthetic.hpp"

namespace kareus::energylens {
namespace {

std::vector<std::size_t> rows_of(const std::vector<DesignPick>& picks) {
  std::vector<std::size_t> out;
  for (const DesignPick& p : picks) out.push_back(p.row);
  return out;
}

double log_det(const Eigen::MatrixXd& m) {
  return Eigen::LDLT<Eigen::MatrixXd>(m).vectorD().array().log().sum();
}

Eigen::MatrixXd random_jacobian(Rng& rng, Eigen::Index rows, Eigen::Index cols) {
  Eigen::MatrixXd J(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) J(i, j) = rng.normal(0.0, 1.0);
  return J;
}

// Rows of two scenarios on two catalogue pairs, with energies from a known closed form.
Dataset candidates() {
  return testing::synthetic_grid([](const Sample& s) { return 100.0 * s.tp + 5e4 / s.batch; }, 0.05,
                                 3);
}

TEST(Design, TheSelectionReadsNoEnergy) {
  Dataset d = candidates();
  FitOptions fit;
  const std::vector<std::size_t> base = rows_of(design_measurements(d.samples, 20, fit));
  Rng rng(11);
  std::vector<Sample> permuted = d.samples, zeroed = d.samples, cleared = d.samples;
  const std::vector<std::size_t> order =
      rng.sample_without_replacement(d.samples.size(), d.samples.size());
  for (std::size_t i = 0; i < order.size(); ++i) permuted[i].energy = d.samples[order[i]].energy;
  for (Sample& s : zeroed) s.energy = Joules{0.0};
  for (Sample& s : cleared) s.energy.reset();
  EXPECT_EQ(rows_of(design_measurements(permuted, 20, fit)), base);
  EXPECT_EQ(rows_of(design_measurements(zeroed, 20, fit)), base);
  EXPECT_EQ(rows_of(design_measurements(cleared, 20, fit)), base);
}

TEST(Design, RankOneGainsEqualTheLogDeterminantComputedDirectly) {
  Rng rng(5);
  const Eigen::MatrixXd J = random_jacobian(rng, 30, 6);
  const double ridge = 0.3;
  const std::vector<DesignPick> picks = greedy_d_optimal(J, 12, ridge);
  Eigen::MatrixXd M = ridge * Eigen::MatrixXd::Identity(6, 6);
  for (const DesignPick& p : picks) {
    const double before = log_det(M);
    const Eigen::VectorXd j = J.row(static_cast<Eigen::Index>(p.row)).transpose();
    M += j * j.transpose();
    EXPECT_NEAR(p.gain, log_det(M) - before, 1e-9);
  }
  // Each pick was the best row left, by the same direct computation.
  M = ridge * Eigen::MatrixXd::Identity(6, 6);
  std::set<std::size_t> taken;
  for (const DesignPick& p : picks) {
    for (Eigen::Index r = 0; r < J.rows(); ++r) {
      if (taken.contains(static_cast<std::size_t>(r))) continue;
      const Eigen::VectorXd j = J.row(r).transpose();
      EXPECT_LE(log_det(M + j * j.transpose()), log_det(M) + p.gain + 1e-9);
    }
    const Eigen::VectorXd j = J.row(static_cast<Eigen::Index>(p.row)).transpose();
    M += j * j.transpose();
    taken.insert(p.row);
  }
}

TEST(Design, TwoPointsOnAStraightLineAreItsEnds) {
  // y = a + b x on x in [0, 1]: det of the 2-point information matrix is (x1 - x2)^2, largest at
  // the two ends (the classical D-optimal design for a line).
  const int n = 21;
  Eigen::MatrixXd J(n, 2);
  for (int i = 0; i < n; ++i)
    J.row(i) << 1.0, 0.5 + 0.5 * std::sin(0.7 * i);  // x in [0, 1], shuffled
  Eigen::Index lo = 0, hi = 0;
  J.col(1).minCoeff(&lo);
  J.col(1).maxCoeff(&hi);
  const std::vector<std::size_t> rows = rows_of(greedy_d_optimal(J, 2, 1e-9));
  EXPECT_EQ(std::set<std::size_t>(rows.begin(), rows.end()),
            (std::set<std::size_t>{static_cast<std::size_t>(lo), static_cast<std::size_t>(hi)}));
}

TEST(Design, BudgetOneIsTheBruteForceBest) {
  Rng rng(9);
  const Eigen::MatrixXd J = random_jacobian(rng, 40, 5);
  const double ridge = 0.01;
  std::size_t best = 0;
  double best_value = -std::numeric_limits<double>::infinity();
  for (Eigen::Index r = 0; r < J.rows(); ++r) {
    const Eigen::VectorXd j = J.row(r).transpose();
    const double v = log_det(ridge * Eigen::MatrixXd::Identity(5, 5) + j * j.transpose());
    if (v > best_value) {
      best_value = v;
      best = static_cast<std::size_t>(r);
    }
  }
  EXPECT_EQ(greedy_d_optimal(J, 1, ridge).front().row, best);
}

TEST(Design, NoRowTwiceTiesToTheLowestIndexAndTheWholePoolWhenAskedFor) {
  Rng rng(2);
  Eigen::MatrixXd J = random_jacobian(rng, 15, 3);
  J.row(9) = J.row(4);  // a duplicate: equal gains, the lower index goes first
  const std::vector<std::size_t> all = rows_of(greedy_d_optimal(J, 15));
  EXPECT_EQ(std::set<std::size_t>(all.begin(), all.end()).size(), 15u);
  const auto at4 = std::find(all.begin(), all.end(), 4u),
             at9 = std::find(all.begin(), all.end(), 9u);
  EXPECT_LT(at4, at9);
  EXPECT_THROW(greedy_d_optimal(J, 16), Error);
}

TEST(Design, EveryFreeParameterAndGroupHasAColumn) {
  const Dataset d = candidates();
  FitOptions fit;
  fit.scale_by = {"scenario"};
  const Eigen::MatrixXd J = design_jacobian(d.samples, fit);
  const std::vector<std::size_t> free = free_parameters(false);
  std::set<std::string> scenarios;
  for (const Sample& s : d.samples) scenarios.insert(s.scenario);
  EXPECT_EQ(static_cast<std::size_t>(J.cols()), free.size() + scenarios.size());
  EXPECT_TRUE(J.allFinite());
  // No row was metered from its run's start: tau_r is not free.
  EXPECT_EQ(std::count(free.begin(), free.end(), std::size_t{tau_r}), 0);
}

TEST(Design, BudgetsOutsideTheCandidatesAreRefused) {
  const Dataset d = candidates();
  EXPECT_THROW(design_measurements(d.samples, 0, FitOptions{}), Error);
  EXPECT_THROW(design_measurements(d.samples, d.samples.size() + 1, FitOptions{}), Error);
  EXPECT_EQ(design_measurements(d.samples, d.samples.size(), FitOptions{}).size(),
            d.samples.size());
}

TEST(Design, ThePoolProtocolScoresBothDesignsOnTheSameTestRows) {
  const Dataset d = candidates();
  EvaluateOptions o;
  o.seeds = 3;
  o.pool_share = 0.7;
  const std::vector<RandomSplit> random = evaluation_splits(d, 10, o);
  o.design = Design::kDOptimal;
  const std::vector<RandomSplit> designed = evaluation_splits(d, 10, o);
  for (std::size_t s = 0; s < random.size(); ++s) {
    EXPECT_EQ(random[s].test, designed[s].test);
    for (std::size_t r : designed[s].train)
      EXPECT_FALSE(std::binary_search(designed[s].test.begin(), designed[s].test.end(), r));
  }
  o.pool_share = 0.0;
  EXPECT_THROW(evaluation_splits(d, 10, o), Error);  // a design needs a pool
}

}  // namespace
}  // namespace kareus::energylens
