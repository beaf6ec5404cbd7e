// SPDX-License-Identifier: Apache-2.0
// The baselines read the drain and the workload where the rows carry them (predictors.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kareus/energylens/predictors.hpp"

namespace kareus::energylens {
namespace {

std::vector<std::unique_ptr<Predictor>> baselines() {
  const std::vector<std::string> scale_by = {"model", "gpu"};
  std::vector<std::unique_ptr<Predictor>> out;
  out.push_back(make_xgboost(TreeKind::kGradientBoosting, scale_by, 7));
  out.push_back(make_xgboost(TreeKind::kRandomForest, scale_by, 7));
  out.push_back(make_per_batch_linear(scale_by));
  return out;
}

Sample row(double cap, double requests, double energy) {
  Sample s;
  s.scenario = "s";
  s.batch = 8.0;
  s.output_tokens = 100.0;
  s.model = "m";
  s.gpu = "g";
  s.max_output_tokens = cap;
  s.requests = requests;
  s.energy = Joules(energy);
  return s;
}

// Rows identical but for the cap and the requests, energy set by them alone (the drain's
// steps): without the two columns every baseline predicts one value for all of them.
TEST(EnergyLensBaselines, ReadTheDrainColumns) {
  std::vector<Sample> train;
  for (double cap : {200.0, 300.0, 400.0})
    for (double requests : {8.0, 16.0, 32.0, 64.0})
      train.push_back(row(cap, requests, 0.1 * cap * (1.0 + 8.0 / requests)));
  const std::vector<Sample> probe = {row(400.0, 8.0, 80.0), row(200.0, 64.0, 22.5)};
  for (const auto& p : baselines()) {
    p->fit(train);
    const std::vector<double> e = p->predict(probe);
    EXPECT_GT(e[0] / e[1], 2.0) << p->name();  // 80 / 22.5 = 3.6
  }
}

Sample workload_row(const std::string& model, const std::string& workload, double energy) {
  Sample s;
  s.scenario = model + workload;
  s.batch = 16.0;
  s.output_tokens = 200.0;
  s.model = model;
  s.gpu = "g";
  s.workload = workload;
  s.energy = Joules(energy);
  return s;
}

// A model never seen in training: its scale group is unknown, so only the workload tells its
// image rows (three times the energy in every seen model) from its text rows.
TEST(EnergyLensBaselines, ReadTheWorkloadOfAnUnseenGroup) {
  std::vector<Sample> train;
  for (const auto& [model, level] : {std::pair{"a", 10.0}, {"b", 20.0}, {"c", 14.0}})
    for (int repeat = 0; repeat < 3; ++repeat) {
      train.push_back(workload_row(model, "text", level));
      train.push_back(workload_row(model, "image", 3.0 * level));
    }
  const std::vector<Sample> probe = {workload_row("new", "image", 45.0),
                                     workload_row("new", "text", 15.0)};
  for (const auto& p : baselines()) {
    p->fit(train);
    const std::vector<double> e = p->predict(probe);
    EXPECT_GT(e[0] / e[1], 1.5) << p->name();
  }
}

// Every row costs the same: a forest's trees have nothing to split on, so it must predict that
// cost. Started from XGBoost 1.7's base_score of 0.5 with a leaf penalty, its one round lands
// well below it (predictor_xgboost.cpp).
TEST(EnergyLensBaselines, ForestPredictsTheLevelOfUniformRows) {
  std::vector<Sample> train;
  for (double batch : {1.0, 2.0, 4.0, 8.0, 16.0, 32.0}) {
    Sample s = workload_row("m", "text", 1000.0);
    s.batch = batch;
    train.push_back(s);
  }
  const auto forest = make_xgboost(TreeKind::kRandomForest, {"model", "gpu"}, 7);
  forest->fit(train);
  EXPECT_NEAR(forest->predict({train.front()})[0], 1000.0, 1.0);
}

}  // namespace
}  // namespace kareus::energylens
