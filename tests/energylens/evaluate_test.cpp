// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/evaluate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kareus/core/error.hpp"
#include "kareus/energylens/closed_form.hpp"
#include "synthetic.hpp"

namespace kareus::energylens {
namespace {

double synthetic_energy(const Sample& s) {
  return 3.0 * s.output_tokens / (std::pow(s.batch, 0.6) + 1.5) * std::pow(s.tp, 0.4) + 20.0 * s.pp;
}

EvaluateOptions quick() {
  EvaluateOptions o;
  o.train_size = 40;
  o.seeds = 3;
  o.curve_sizes = {20, 40};
  o.fit.restarts = 3;
  o.progress = false;
  return o;
}

TEST(EnergyLensEvaluate, ReportsEveryModelAndTheClosedFormWinsOnItsOwnData) {
  const Dataset d = testing::synthetic_grid(synthetic_energy, 0.02, 31);
  const EvaluationReport r = evaluate(d, quick());
  const Json j = r.to_json();
  for (const char* name :
       {"energylens", "random_forest", "gradient_boosting", "linear", "latency_proxy"}) {
    ASSERT_TRUE(j["models"].contains(name)) << name;
    EXPECT_TRUE(j["models"][name]["top1"]["mean"].is_number()) << name;
    EXPECT_TRUE(j["models"][name]["pairwise"]["mean"].is_number()) << name;
  }
  EXPECT_TRUE(j["models"]["latency_proxy"]["mape"].is_null());
  const double lens = j["models"]["energylens"]["mape"]["mean"];
  EXPECT_LT(lens, 5.0);
  EXPECT_LT(lens, double(j["models"]["random_forest"]["mape"]["mean"]));
  EXPECT_GT(double(j["models"]["energylens"]["pairwise"]["mean"]), 90.0);
  EXPECT_EQ(j["sample_efficiency"].size(), 2u);
  ASSERT_FALSE(j["extrapolation"].is_null());
  EXPECT_GE(double(j["extrapolation"]["test_min_batch"]),
            3.0 * double(j["extrapolation"]["train_max_batch"]));
  EXPECT_NE(r.to_markdown().find("| energylens |"), std::string::npos);
}

// The progress count ends where its total said: a curve size equal to the training size reuses
// the random splits, so it is no work to count (it was counted, and the run ended one seed's
// worth short of its total).
TEST(EnergyLensEvaluate, ProgressEndsAtItsTotal) {
  const Dataset d = testing::synthetic_grid(synthetic_energy, 0.02, 31);
  EvaluateOptions o = quick();
  o.seeds = 1;
  o.progress = true;
  ::testing::internal::CaptureStderr();
  evaluate(d, o);
  const std::string err = ::testing::internal::GetCapturedStderr();
  const auto slash = err.find('/');
  ASSERT_NE(slash, std::string::npos) << err;
  const int total = std::stoi(err.substr(slash + 1));
  const auto done = err.find("done, ");
  ASSERT_NE(done, std::string::npos) << err;
  EXPECT_EQ(std::stoi(err.substr(done + 6)), total) << err;
}

TEST(EnergyLensEvaluate, NoLatencyProxyWithoutTime) {
  Dataset d = testing::synthetic_grid(synthetic_energy, 0.02, 31);
  for (Sample& s : d.samples) s.time.reset();
  d.has_time = false;
  const Json j = evaluate(d, quick()).to_json();
  EXPECT_FALSE(j["models"].contains("latency_proxy"));
}

TEST(EnergyLensEvaluate, RejectsTrainSizeLeavingNoTestRows) {
  const Dataset d = testing::synthetic_grid(synthetic_energy, 0.02, 31);
  EvaluateOptions o = quick();
  o.train_size = d.samples.size();
  EXPECT_THROW(evaluate(d, o), Error);
}

}  // namespace
}  // namespace kareus::energylens
