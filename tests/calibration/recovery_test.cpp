// SPDX-License-Identifier: Apache-2.0
// Calibration against known constants: runs recorded through the runtime on the fake NVML, with
// every instruction run by the emulator on a GPU whose free constants were changed (the "real"
// GPU), are fitted starting from the catalogue; the changed constants must come back within their
// stated tolerances, and predictions for a workload the fit never saw must improve.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <map>

#include "common/scratch_dir.hpp"
#include "emulated_job.hpp"
#include "fake_nvml/fake_nvml_fixture.hpp"
#include "kareus/calibration/fit.hpp"
#include "kareus/hardware/gpu_file.hpp"
#include "sweep_schedule.hpp"

namespace kareus::calibration {
namespace {

// The "real" GPU: four free constants away from the catalogue's values, each by more than the
// tolerance it is recovered within below.
const std::map<std::string, double> kTruth = {{"gemm_mma_efficiency", 0.86},
                                              {"attention_forward_efficiency", 0.66},
                                              {"dynamic_power_coefficient_w_per_ghz_v2", 310.0},
                                              {"uncore_active_power_w", 48.0}};

// Every reading of time and energy carries 1 % of noise (Emulator::measure), and every
// configuration is read 6 times (iterations), as a user would record a few minutes of training.
constexpr double kNoise = 0.01;
constexpr int kIterations = 6;

GpuFile catalogue() {
  return read_gpu_file("a100-sxm4-40gb");
}

workload::Workload workload_of(const std::string& model, int tp, int pp, int mbs, int seq) {
  workload::WorkloadRequest r;
  r.model = model;
  r.gpu = "a100-sxm4-40gb";
  r.parallelism = {tp, 1, pp, 1, mbs, seq, 2 * pp, workload::Recompute::kFull, {}, 8};
  return workload::make_workload(r);
}

// Records `w` at each clock on the truth GPU; returns the record files.
std::vector<std::string> record(const workload::Workload& w, const std::vector<double>& clocks,
                                const std::filesystem::path& dir, double noise) {
  const GpuSpec truth = catalogue().with_values(kTruth).spec();
  std::vector<std::string> files;
  for (double f : clocks) {
    const kareus::testing::FakeNvml nvml(
        nlohmann::json::parse(kareus::testing::emulated_nvml_script(truth, w.parallelism.pp)));
    kareus::testing::EmulatedJob job;
    job.schedule = kareus::testing::sweep_schedule(w, MHz(f));
    job.truth = truth;
    job.iterations = kIterations;
    job.noise_sigma = noise;
    job.seed = static_cast<std::uint64_t>(f);
    job.record = dir / (w.model.name + "-" + std::to_string(static_cast<int>(f)) + ".{rank}.jsonl");
    for (const auto& p : kareus::testing::play(job)) files.push_back(p.string());
  }
  return files;
}

double mean_error(const Measurements& m, const GpuSpec& gpu, bool energy) {
  std::vector<std::size_t> groups(m.groups());
  for (std::size_t g = 0; g < groups.size(); ++g) groups[g] = g;
  const Residuals r = m.residuals(gpu, groups);
  double sum = 0;
  int n = 0;
  for (std::size_t k = 0; k < r.log_ratio.size(); ++k)
    if (r.energy[k] == energy) {
      sum += std::fabs(std::expm1(r.log_ratio[k]));
      ++n;
    }
  return sum / n;
}

class Recovery : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new kareus::testing::ScratchDir("calibration_recovery");
    // Two sequence lengths: attention grows with its square, matrix products linearly, so the
    // two efficiencies move the spans differently.
    files_ = record(workload_of("llama3.2-3b", 8, 2, 4, 4096), {1410, 1200, 1050, 900},
                    dir_->path(), kNoise);
    for (const auto& f :
         record(workload_of("llama3.2-3b", 8, 2, 8, 1024), {1380, 1110, 960}, dir_->path(), kNoise))
      files_.push_back(f);
    measured_ = new SpanMeasurements(read_records(files_), catalogue().spec());
    result_ = new Calibration(calibrate(catalogue(), *measured_));
    // The figures docs/benchmarks/calibration.md quotes.
    std::cout << measured_->describe() << "\n"
              << table()
              << fmt::format(
                     "fit: time {:.2f} % -> {:.2f} %, energy {:.2f} % -> {:.2f} %; "
                     "cross-validated ({} folds): time {:.2f} % (catalogue {:.2f} %), "
                     "energy {:.2f} % (catalogue {:.2f} %)\n",
                     100 * result_->fit_error_before.time, 100 * result_->fit_error_after.time,
                     100 * result_->fit_error_before.energy, 100 * result_->fit_error_after.energy,
                     result_->cv.folds, 100 * result_->cv.calibrated.time,
                     100 * result_->cv.catalogue.time, 100 * result_->cv.calibrated.energy,
                     100 * result_->cv.catalogue.energy);
  }
  static void TearDownTestSuite() {
    delete result_;
    delete measured_;
    delete dir_;
  }
  // Every constant's fit, for failure messages.
  static std::string table() {
    std::string out;
    for (const auto& c : result_->constants) {
      const double truth = kTruth.count(c.key) ? kTruth.at(c.key) : c.catalogue;
      out += fmt::format("{} catalogue {:g}, truth {:g} -> {:g} +- {:.2g}: {}\n", c.key,
                         c.catalogue, truth, c.value, c.sd, c.reason);
    }
    return out;
  }
  static const ConstantFit& fit(const std::string& key) {
    for (const auto& c : result_->constants)
      if (c.key == key) return c;
    throw std::runtime_error("no constant " + key);
  }

  static kareus::testing::ScratchDir* dir_;
  static std::vector<std::string> files_;
  static SpanMeasurements* measured_;
  static Calibration* result_;
};

kareus::testing::ScratchDir* Recovery::dir_ = nullptr;
std::vector<std::string> Recovery::files_;
SpanMeasurements* Recovery::measured_ = nullptr;
Calibration* Recovery::result_ = nullptr;

// One test: each check below needs the same recorded runs and fit, which take a minute.
TEST_F(Recovery, RecordedRunsGiveBackThePerturbedConstants) {
  {
    SCOPED_TRACE("the records hold every span of every rank");
    // 4 + 3 clocks x 2 stages; each rank 6 iterations of 2 x 4 instructions, every span ended.
    ASSERT_EQ(files_.size(), 14u);
    const auto records = read_records(files_);
    for (const auto& r : records) {
      EXPECT_TRUE(r.ended);
      EXPECT_EQ(r.instructions.size(), 48u);
      EXPECT_EQ(r.iterations.size(), 6u);
      EXPECT_EQ(r.header.gpu.name, "NVIDIA A100-SXM4-40GB");
      for (const auto& s : r.instructions) EXPECT_TRUE(s.ended);
    }
    EXPECT_EQ(measured_->observations(), 2u * 14 * 48);
  }
  {
    SCOPED_TRACE("the perturbed constants are identified and recovered");
    // Stated tolerances: the two efficiencies within 0.03, the two power constants within 8 %;
    // each moved by more than that.
    const std::map<std::string, double> tolerance = {
        {"gemm_mma_efficiency", 0.03},
        {"attention_forward_efficiency", 0.03},
        {"dynamic_power_coefficient_w_per_ghz_v2", 0.08 * 310},
        {"uncore_active_power_w", 0.08 * 48}};
    for (const auto& [key, value] : kTruth) {
      const ConstantFit& c = fit(key);
      EXPECT_GT(std::fabs(value - c.catalogue), tolerance.at(key)) << key;
      EXPECT_TRUE(c.identified) << key << ": " << c.reason << "\n" << table();
      EXPECT_NEAR(c.value, value, tolerance.at(key)) << key << "\n" << table();
      EXPECT_GT(c.sd, 0) << key;
    }
  }
  {
    SCOPED_TRACE("every identified constant is within four standard deviations of the truth");
    // The unperturbed ones too: the truth is the catalogue's value for them.
    for (const auto& c : result_->constants) {
      if (!c.identified) continue;
      const double truth = kTruth.count(c.key) ? kTruth.at(c.key) : c.catalogue;
      EXPECT_LE(std::fabs(c.value - truth), 4 * c.sd) << c.key << "\n" << table();
    }
  }
  {
    SCOPED_TRACE("nothing is written that the records do not identify");
    // Sequential instructions run no collective beside a kernel: the interference constants
    // cannot be seen in them.
    for (const char* key : {"collective_stretch_memory", "interference_memory_bound_gain",
                            "collective_stretch_latency_bound", "sm_resident_power_fraction"}) {
      EXPECT_FALSE(fit(key).identified) << key;
      EXPECT_FALSE(fit(key).reason.empty());
    }
    const GpuFile written = result_->calibrated_file(catalogue(), *measured_);
    for (const auto& c : result_->constants) {
      EXPECT_DOUBLE_EQ(written.value(c.key), c.identified ? c.value : c.catalogue) << c.key;
      EXPECT_EQ(written.source(c.key).starts_with("fitted by kareus calibrate"), c.identified);
    }
    EXPECT_TRUE(written.name().starts_with("a100-sxm4-40gb@"));
    EXPECT_EQ(written.document.at("calibration").at("count"), measured_->observations());
  }
  {
    SCOPED_TRACE("the fit explains the records and cross validation holds out whole clocks");
    EXPECT_LT(result_->rms_after, 0.25 * result_->rms_before);
    // The readings carry 1 % noise: nothing can fit them much closer.
    EXPECT_LT(result_->fit_error_after.time, 0.015);
    EXPECT_LT(result_->fit_error_after.energy, 0.015);
    EXPECT_GE(result_->cv.folds, 2);
    EXPECT_LT(result_->cv.calibrated.time, 0.5 * result_->cv.catalogue.time);
    EXPECT_LT(result_->cv.calibrated.energy, 0.5 * result_->cv.catalogue.energy);
  }
  {
    SCOPED_TRACE("predictions for another workload improve");
    const auto other = workload_of("qwen3-1.7b", 4, 1, 8, 4096);
    kareus::testing::ScratchDir dir("calibration_other");
    const SpanMeasurements held_out(read_records(record(other, {1380, 990}, dir.path(), 0.0)),
                                    catalogue().spec());
    const GpuSpec calibrated = result_->calibrated_file(catalogue(), *measured_).spec();
    for (bool energy : {false, true}) {
      const double before = mean_error(held_out, catalogue().spec(), energy);
      const double after = mean_error(held_out, calibrated, energy);
      std::cout << fmt::format("{} (never fitted), {}: mean error {:.2f} % -> {:.2f} %\n",
                               other.model.name, energy ? "energy" : "time", 100 * before,
                               100 * after);
      EXPECT_LT(after, 0.5 * before) << (energy ? "energy" : "time");
      EXPECT_LT(after, 0.03) << (energy ? "energy" : "time");
    }
  }
}

}  // namespace
}  // namespace kareus::calibration
