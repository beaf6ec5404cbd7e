// SPDX-License-Identifier: Apache-2.0
// kareus run-schedule against the fake NVML: --device picks the GPU, and --gpu, its spelling
// before the one vocabulary of docs/cli.md, still does for one release.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/run_cli.hpp"
#include "nvml/fake_nvml/fake_nvml_fixture.hpp"

namespace kareus {
namespace {

namespace fs = std::filesystem;

class RunScheduleCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("kareus-run-schedule-" + std::to_string(getpid()));
    const auto plan = testing::run_cli(
        KAREUS_BINARY,
        "plan --model llama3.2-3b --tp 8 --pp 2 --mbs 8 --seq 4096 --microbatches 4 "
        "--methods megatron --quiet --db " +
            (dir_ / "store.sqlite").string() + " --out " + (dir_ / "plan").string());
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string schedule() { return (dir_ / "plan" / "schedule.json").string(); }
  static fs::path dir_;
};
fs::path RunScheduleCli::dir_;

// The fake machine has GPUs 0 and 1, so asking for GPU 7 shows which index reached NVML.
TEST_F(RunScheduleCli, DevicePicksTheNvmlIndex) {
  const testing::FakeNvml fake;
  testing::expect_rejected(
      KAREUS_BINARY,
      {"run-schedule --stage 1 --hold-ms 1 --device 7 --schedule " + schedule(), "gpu = 7"});
  EXPECT_TRUE(fake.log().empty());
}

TEST_F(RunScheduleCli, OldGpuSpellingStillWorksAndSaysSo) {
  const testing::FakeNvml fake;
  const auto r = testing::run_cli(
      KAREUS_BINARY, "run-schedule --stage 1 --hold-ms 1 --gpu 7 --schedule " + schedule());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("gpu = 7"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--gpu is deprecated"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("use --device"), std::string::npos) << r.err;
}

// Without NVML and without kareusd at --daemon, the daemon is what the user must fix: it used to
// say "NVML unavailable".
TEST_F(RunScheduleCli, AMissingDaemonIsNamedBeforeAMissingNvml) {
  setenv("KAREUS_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  const std::string socket = (dir_ / "no-kareusd.sock").string();
  const auto r = testing::run_cli(KAREUS_BINARY, "run-schedule --stage 1 --hold-ms 1 --daemon " +
                                                     socket + " --schedule " + schedule());
  // A daemon that is not running is the machine's to fix (exit 4, docs/cli.md), in one line.
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("cannot connect to kareusd at " + socket), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  unsetenv("KAREUS_NVML_LIBRARY");
}

TEST_F(RunScheduleCli, BothSpellingsAreRefused) {
  testing::expect_rejected(KAREUS_BINARY,
                           {"run-schedule --dry-run --device 0 --gpu 1 --schedule " + schedule(),
                            "--gpu excludes --device"});
}

}  // namespace
}  // namespace kareus
