// SPDX-License-Identifier: Apache-2.0
// Names from files and devices reach the terminal escaped: a GPU name from NVML, kernel names from
// a profile, a schedule's GPU and a scenario of an EnergyLens CSV holding ESC and OSC sequences,
// a bell, a newline and a right-to-left override. Written raw, they would retitle or clear the
// terminal, start rows of their own, or make a name read backwards.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/run_cli.hpp"
#include "common/scratch_dir.hpp"
#include "nvml/fake_nvml/fake_nvml_fixture.hpp"

namespace kareus {
namespace {

namespace fs = std::filesystem;

// ESC ] 0 ; ... BEL sets the window title; ESC [ 2 J clears the screen; U+202E reverses what
// follows.
const std::string kHostile = "\x1b]0;owned\x07\x1b[2Jname\xe2\x80\xae\nrow";
const std::string kEscaped = "\\x1b]0;owned\\x07\\x1b[2Jname\\u202e\\x0arow";

void expect_escaped(const testing::CliRun& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& raw : {std::string("\x1b"), std::string("\x07"),
                                 std::string("\xe2\x80\xae"), std::string("\nrow")})
    EXPECT_EQ(r.out.find(raw), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(kEscaped), std::string::npos) << r.out;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(TerminalOutput, DevicesEscapeTheGpuName) {
  auto script = testing::two_gpu_script();
  script["devices"][1]["name"] = kHostile;
  const testing::FakeNvml fake(script);
  const auto r = testing::run_cli(KAREUS_BINARY, "devices");
  expect_escaped(r);
  // The name is in the table and in the line saying the catalogue has no such GPU.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 5) << r.out;
}

TEST(TerminalOutput, KernelDvfsPlanEscapesKernelNames) {
  const testing::ScratchDir dir("kernel_names");
  // A quoted CSV field may hold a newline.
  write(dir.path() / "p.csv",
        "kernel,clock_mhz,time_s,energy_j,pass\n"
        "\"" +
            kHostile +
            "\",1005,0.0001088,0.0087959,forward\n"
            "\"" +
            kHostile +
            "\",1410,0.0001,0.0106971,forward\n"
            "gemm,1005,0.002,0.18,forward\ngemm,1410,0.0015,0.2,forward\n");
  expect_escaped(testing::run_cli(
      KAREUS_BINARY, "kernel-dvfs --plan --kernel-profile " + (dir.path() / "p.csv").string()));
}

TEST(TerminalOutput, RunScheduleEscapesTheScheduleGpu) {
  const testing::ScratchDir dir("schedule_gpu");
  std::ifstream in(std::string(KAREUS_TEST_DATA_DIR) + "/runtime/two_stages.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string gpu = "\"gpu\": \"NVIDIA A100-SXM4-40GB\"";
  text.replace(text.find(gpu), gpu.size(),
               "\"gpu\": \"\\u001b]0;owned\\u0007\\u001b[2Jname\\u202e\\nrow\"");
  write(dir.path() / "s.json", text);
  expect_escaped(testing::run_cli(
      KAREUS_BINARY, "run-schedule --dry-run --schedule " + (dir.path() / "s.json").string()));
}

// The scenario and model columns of the CSV the model is fitted on and predicts for: fit shows
// each model's scale group, predict each row's scenario.
TEST(TerminalOutput, EnergyLensFitAndPredictEscapeNamesFromTheCsv) {
  const testing::ScratchDir dir("energylens_names");
  std::string csv = "scenario,tp,pp,batch,output_tokens,energy_j,model,gpu\n";
  for (const std::string& model : {kHostile, std::string("plain")})
    for (int tp : {1, 2, 4})
      for (int batch : {1, 8, 64})
        csv += "\"" + kHostile + "\"," + std::to_string(tp) + ",1," + std::to_string(batch) +
               ",100," + std::to_string((model == kHostile ? 1 : 2) * (10.0 * tp + 100.0 / batch)) +
               ",\"" + model + "\",g\n";
  write(dir.path() / "d.csv", csv);
  const std::string data = (dir.path() / "d.csv").string();
  const std::string model = (dir.path() / "m.json").string();
  const auto fit = testing::run_cli(
      KAREUS_BINARY, "energylens fit --descriptors off --data " + data + " --out " + model);
  expect_escaped(fit);
  expect_escaped(
      testing::run_cli(KAREUS_BINARY, "energylens predict --fit " + model + " --data " + data));
  // select heads each scenario's ranking with its name.
  expect_escaped(testing::run_cli(KAREUS_BINARY,
                                  "energylens select --fit " + model + " --candidates " + data));
}

// A note on stderr quotes the candidates' path: a file name may hold the same bytes.
TEST(TerminalOutput, EnergyLensNotesEscapeThePath) {
  const testing::ScratchDir dir("energylens_notes");
  std::string csv = "scenario,tp,pp,batch,output_tokens,energy_j,model,gpu\n";
  for (int tp : {1, 2, 4})
    for (int batch : {1, 8, 64})
      csv += "s," + std::to_string(tp) + ",1," + std::to_string(batch) + ",100," +
             std::to_string(10.0 * tp + 100.0 / batch) + ",m,g\n";
  write(dir.path() / "d.csv", csv);
  const std::string model = (dir.path() / "m.json").string();
  ASSERT_EQ(testing::run_cli(KAREUS_BINARY, "energylens fit --descriptors off --data " +
                                                (dir.path() / "d.csv").string() + " --out " + model)
                .exit_code,
            0);
  // A candidate far outside the training range draws a note naming the file.
  const fs::path hostile = dir.path() / ("c\x1b[2J.csv");
  write(hostile, "scenario,tp,pp,batch,output_tokens,model,gpu\ns,64,1,4096,100,m,g\n");
  const auto r = testing::run_cli(KAREUS_BINARY, "energylens select --fit " + model +
                                                     " --candidates '" + hostile.string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("note: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\x1b[2J"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("c\\x1b[2J.csv"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kareus
