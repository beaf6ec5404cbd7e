// SPDX-License-Identifier: Apache-2.0
// The user's loop end to end with the built programs, on the fake NVML: plan, record the plan's
// run (the stand-in training job, kareus-emulated-training, on a GPU whose free constants differ
// from the catalogue's), compare the plan with the records, calibrate, and plan again on the
// calibrated GPU file, found by path and by name in the user's catalogue. The re-planned schedule,
// recorded on the same GPU, must be predicted better than the first.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "common/run_cli.hpp"
#include "common/scratch_dir.hpp"
#include "kareus/core/json.hpp"

namespace kareus {
namespace {

namespace fs = std::filesystem;
using testing::run_cli;

// The "real" GPU: the matrix products slower, more power per GHz V^2, as in recovery_test.cpp.
const std::string kTruth =
    "--set gemm_mma_efficiency=0.86 --set dynamic_power_coefficient_w_per_ghz_v2=310";
const std::string kWorkload =
    "--model llama3.2-3b --tp 8 --pp 4 --mbs 4 --seq 4096 "
    "--microbatches 4";

class CalibrationLoop : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir("calibration_loop");
    plan("plan", "");
    // Two sequence lengths, so that attention and matrix products move the spans differently.
    const auto other = run_cli(KAREUS_BINARY,
                               "plan --model llama3.2-3b --tp 8 --pp 4 --mbs 8 --seq 1024 "
                               "--microbatches 4 --methods perseus --quiet --db " +
                                   path("store.sqlite") + " --out " + path("plan-short"));
    ASSERT_EQ(other.exit_code, 0) << other.err;
    record("plan", "run", "--slowdown 1 1 1 1.12");
    record("plan", "base", "");
    record("plan-short", "short", "");
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::string path(const std::string& name) { return (dir_->path() / name).string(); }
  static std::string records(const std::string& prefix) {
    std::string out;
    for (int rank = 0; rank < 4; ++rank) out += " " + path(prefix + "." + std::to_string(rank));
    return out;
  }
  static void plan(const std::string& out, const std::string& gpu_file) {
    const auto r =
        run_cli(KAREUS_BINARY, "plan " + kWorkload + " --methods perseus --quiet " + gpu_file +
                                   " --db " + path("store.sqlite") + " --out " + path(out));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // Records every rank of the plan's schedule on the truth GPU, 4 iterations, 1 % noise.
  static void record(const std::string& plan_dir, const std::string& prefix,
                     const std::string& extra) {
    const std::string cmd = std::string(KAREUS_EMULATED_TRAINING) + " --schedule " +
                            path(plan_dir) + "/schedule.json --gpu a100-sxm4-40gb " + kTruth +
                            " --iterations 4 --noise 0.01 --record " + path(prefix) + ".{rank} " +
                            extra;
    ASSERT_EQ(std::system((cmd + " >/dev/null").c_str()), 0) << cmd;
  }
  static double iteration_time_error(const std::string& plan_dir, const std::string& prefix) {
    const auto r = run_cli(
        KAREUS_BINARY, "compare --json --plan " + path(plan_dir) + " --measured" + records(prefix));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Json::parse(r.out).at("iteration_time_s").at("error").get<double>();
  }

  static testing::ScratchDir* dir_;
};
testing::ScratchDir* CalibrationLoop::dir_ = nullptr;

TEST_F(CalibrationLoop, CompareNamesTheStragglerAndKeepsItOutOfTheKinds) {
  const auto r = run_cli(KAREUS_BINARY,
                         "compare --json --plan " + path("plan") + " --measured" + records("run"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json c = Json::parse(r.out);
  EXPECT_EQ(c.at("ranks"), 4);
  EXPECT_EQ(c.at("iterations"), 4);
  ASSERT_EQ(c.at("outliers").size(), 1u) << c.at("outliers").dump();
  EXPECT_EQ(c.at("outliers")[0].at("rank"), 3);
  EXPECT_EQ(c.at("outliers")[0].at("what"), "straggler");
  for (const auto& k : c.at("kinds")) {
    EXPECT_NE(k.at("stage"), 3) << "the straggler's stage is kept out";
    // Slower matrix products: every kind takes longer and spends more than planned.
    EXPECT_GT(k.at("time_s").at("error").get<double>(), 0.01) << k.dump();
    EXPECT_GT(k.at("energy_j").at("error").get<double>(), 0.01) << k.dump();
  }
  const auto text =
      run_cli(KAREUS_BINARY, "compare --plan " + path("plan") + " --measured" + records("run"));
  EXPECT_NE(text.out.find("outlier: rank 3 (stage 3, GPU-emulated-0003) straggler"),
            std::string::npos)
      << text.out;

  // The report's page shows the same as a section.
  const auto page =
      run_cli(KAREUS_BINARY, "report --plan " + path("plan") + " --out " + path("report.html") +
                                 " --measured" + records("run"));
  ASSERT_EQ(page.exit_code, 0) << page.err;
  std::ifstream in(path("report.html"));
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("<h2>Measured against the plan</h2>"), std::string::npos);
  EXPECT_NE(html.find("<b>Outlier</b>: rank 3 (stage 3, GPU-emulated-0003) straggler"),
            std::string::npos);
}

TEST_F(CalibrationLoop, CalibratedPlansArePredictedBetter) {
  const auto cal =
      run_cli(KAREUS_BINARY, "calibrate --gpu a100-sxm4-40gb --json --out " + path("my-a100.json") +
                                 " --measured" + records("base") + records("short"));
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  const Json provenance = Json::parse(cal.out);
  EXPECT_EQ(provenance.at("measurements").size(), 8u);
  const Json written = Json::parse(std::ifstream(path("my-a100.json")));
  EXPECT_EQ(written.at("calibration").at("base"), "a100-sxm4-40gb");
  const std::string name = written.at("name");
  EXPECT_TRUE(name.starts_with("a100-sxm4-40gb@")) << name;

  // Re-planned on the calibrated file, and recorded on the same GPU: predicted better.
  plan("replanned", "--gpu-file " + path("my-a100.json"));
  record("replanned", "again", "");
  const double before = std::fabs(iteration_time_error("plan", "base"));
  const double after = std::fabs(iteration_time_error("replanned", "again"));
  EXPECT_LT(after, 0.5 * before) << before << " -> " << after;

  // By name from the user's catalogue: the same GPU file.
  fs::create_directories(dir_->path() / "config" / "kareus" / "gpus");
  fs::copy_file(path("my-a100.json"), dir_->path() / "config" / "kareus" / "gpus" / "mine.json");
  const std::string env = "env XDG_CONFIG_HOME=" + path("config") + " ";
  const auto by_name = run_cli(env + KAREUS_BINARY,
                               "simulate " + kWorkload + " --clock 1200 --json --gpu-file " + name);
  const auto by_path =
      run_cli(KAREUS_BINARY,
              "simulate " + kWorkload + " --clock 1200 --json --gpu-file " + path("my-a100.json"));
  ASSERT_EQ(by_name.exit_code, 0) << by_name.err;
  ASSERT_EQ(by_path.exit_code, 0) << by_path.err;
  EXPECT_EQ(by_name.out, by_path.out);
  const auto catalogue = run_cli(KAREUS_BINARY, "simulate " + kWorkload + " --clock 1200 --json");
  EXPECT_NE(catalogue.out, by_path.out);
}

}  // namespace
}  // namespace kareus
