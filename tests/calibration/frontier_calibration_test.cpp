// SPDX-License-Identifier: Apache-2.0
// Calibration to the real Llama TP8 frontiers (tests/data/calibration/): the fit ends after a
// bounded number of plans, each method held out in turn is predicted with a finite error, and the
// fit does not leave the frontiers it was fitted to further from the model than the catalogue.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "kareus/calibration/fit.hpp"
#include "kareus/core/paths.hpp"
#include "kareus/hardware/gpu_file.hpp"

namespace kareus::calibration {
namespace {

// The real measurements, counting the plans the fit asks for.
class CountedSearches final : public Measurements {
 public:
  explicit CountedSearches(Measurements& m) : m_(m) {}
  std::size_t groups() const override { return m_.groups(); }
  std::string group_name(std::size_t g) const override { return m_.group_name(g); }
  std::size_t observations() const override { return m_.observations(); }
  Residuals residuals(const GpuSpec& gpu, const std::vector<std::size_t>& groups) const override {
    return m_.residuals(gpu, groups);
  }
  bool search_on(const GpuSpec& gpu, const std::vector<std::size_t>& groups) override {
    planned += groups.size();
    return m_.search_on(gpu, groups);
  }
  std::string describe() const override { return m_.describe(); }
  std::vector<std::string> files() const override { return m_.files(); }

  std::size_t planned = 0;  // method frontiers planned

 private:
  Measurements& m_;
};

TEST(FrontierCalibration, RealLlamaFrontiersFitInBoundedPlansAndPredictTheHeldOutMethod) {
  const workload::Workload w = workload::make_workload(workload::read_workload_request(
      (data_dir() / "workloads" / "llama3.2-3b_tp8_mbs8_seq4096.json").string()));
  FrontierMeasurements real(
      std::string(KAREUS_TEST_DATA_DIR) + "/calibration/llama3.2_3b_tp8_mbs8_seq4096.csv", w);
  CountedSearches counted(real);
  FitOptions options;
  options.folds = 3;  // each method held out once
  // The test's budget; docs/benchmarks/calibration.md runs the defaults.
  options.max_rounds = 2;
  options.max_iterations = 15;
  const Calibration c = calibrate(read_gpu_file("a100-sxm4-40gb"), counted, options);
  for (const auto& f : c.cv.per_fold)
    std::cout << fmt::format(
        "{} held out: time {:.2f} % (catalogue {:.2f} %), energy {:.2f} % "
        "(catalogue {:.2f} %)\n",
        f.held_out.front(), 100 * f.calibrated.time, 100 * f.catalogue.time,
        100 * f.calibrated.energy, 100 * f.catalogue.energy);

  // Plans: the catalogue's of every method, max_rounds searches of the fit on all three, then its
  // result's; per fold, max_rounds searches on two methods and the held-out one's.
  EXPECT_LE(counted.planned, 3 + 3 * 2 + 3 + 3 * (2 * 2 + 1));
  ASSERT_EQ(c.cv.per_fold.size(), 3u);
  for (const auto& f : c.cv.per_fold) {
    ASSERT_EQ(f.held_out.size(), 1u);
    for (double e : {f.calibrated.time, f.calibrated.energy, f.catalogue.time, f.catalogue.energy})
      EXPECT_TRUE(std::isfinite(e) && e > 0) << f.held_out.front();
  }
  EXPECT_LE(c.rms_after, c.rms_before);
  std::size_t identified = 0;
  for (const auto& k : c.constants) identified += k.identified;
  EXPECT_GT(identified, 0u);
}

}  // namespace
}  // namespace kareus::calibration
