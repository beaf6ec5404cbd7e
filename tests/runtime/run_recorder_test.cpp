// SPDX-License-Identifier: Apache-2.0
// The measurement record as the frequency controller writes it on the fake NVML: every span, every
// applied clock change and every iteration as one line; a file with a record is never appended
// to; a killed job leaves every line it finished.
#include "kareus/runtime/run_recorder.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "common/error_of.hpp"
#include "common/scratch_dir.hpp"
#include "fake_nvml/fake_nvml_fixture.hpp"
#include "kareus/runtime/frequency_controller.hpp"

namespace kareus::runtime {
namespace {

using kareus::testing::error_of;
using kareus::testing::FakeNvml;

const std::string kFixture = std::string(KAREUS_TEST_DATA_DIR) + "/runtime/two_stages.json";

std::unique_ptr<FrequencyController> recording(const Schedule& s, const std::filesystem::path& path,
                                               int rank = 0) {
  auto nvml = std::make_shared<const nvml::Nvml>();
  ControllerOptions o;
  o.record = RecordOptions{path, rank, 0, nvml, {}};
  return std::make_unique<FrequencyController>(s, 0, std::make_unique<NvmlClockBackend>(nvml, 0),
                                               o);
}

// One iteration of stage 0, each instruction held `hold_ms` at its clock.
void play(FrequencyController& c, const Schedule& s, int hold_ms = 2) {
  for (const auto& in : s.stages[0].instructions) {
    c.on_instruction_begin(0, in.microbatch, in.direction);
    c.wait_until_applied();
    std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
    c.on_instruction_end();
  }
  c.on_step_end();
}

TEST(RunRecorder, WritesEverySpanClockChangeAndIteration) {
  FakeNvml fake;
  kareus::testing::ScratchDir dir("run_recorder");
  const Schedule s = load_schedule(kFixture);
  {
    auto c = recording(s, dir.path() / "run.jsonl");
    EXPECT_EQ(c->record_path(), dir.path() / "run.jsonl");
    // Held 20 ms: the time and the energy of a boundary are read one after the other, and on a
    // loaded machine the gap between them (at 400 W) must stay small against the span's energy.
    play(*c, s, 20);
    play(*c, s, 20);
  }
  const auto r = measurement::read_record(dir.path() / "run.jsonl");
  EXPECT_TRUE(r.ended);
  EXPECT_EQ(r.header.boundaries, measurement::Boundaries::kHost);
  EXPECT_EQ(r.header.gpu.name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(r.header.gpu.driver, "fake");
  EXPECT_DOUBLE_EQ(r.header.gpu.power_limit.value(), 400);
  EXPECT_EQ(r.header.schedule, s);
  ASSERT_EQ(r.instructions.size(), 12u);
  ASSERT_EQ(r.iterations.size(), 2u);
  // 930 930 900 1020 900 1410: five changes in the first iteration, and again in the second.
  EXPECT_EQ(r.clocks.size(), 10u);
  for (std::size_t i = 0; i < r.instructions.size(); ++i) {
    const auto& span = r.instructions[i];
    EXPECT_EQ(span.iteration, static_cast<int>(i / 6));
    EXPECT_EQ(span.index, i % 6);
    EXPECT_TRUE(span.ended);
    EXPECT_GE(span.time.value(), 0.02);
    // The fake GPU draws 52 W + 0.25 W/MHz. A span begins before its clock change is applied,
    // so it may run at the previous instruction's clock for a while: its average power lies
    // between the two clocks' (to within 2 ms of power, the gap between reading time and energy
    // at each end, and the counter's 1 mJ). An instruction at its predecessor's clock (the
    // second one, 930 after 930) runs at that power throughout.
    const auto watts = [](MHz f) { return 52 + 0.25 * f.value(); };
    const MHz previous = s.stages[0].instructions[(i + 5) % 6].clock;
    const double slack = watts(MHz(1410)) * 0.002 + 0.002;
    const double low = std::min(watts(previous), watts(span.clock)) * span.time.value();
    const double high = std::max(watts(previous), watts(span.clock)) * span.time.value();
    EXPECT_GE(span.energy.value(), low - slack) << i;
    EXPECT_LE(span.energy.value(), high + slack) << i;
    if (i % 6 == 1) {
      EXPECT_NEAR(span.energy.value(), low, slack) << i;
    }
    EXPECT_EQ(span.observed_clock, span.clock);
    EXPECT_EQ(span.predicted_time, s.stages[0].instructions[i % 6].predicted_time);
  }
  for (const auto& it : r.iterations) {
    double busy = 0;
    for (const auto& span : r.instructions)
      if (span.iteration == it.iteration) busy += span.time.value();
    EXPECT_GE(it.time.value(), busy);
    EXPECT_EQ(it.predicted_time, s.predicted.iteration_time);
  }
}

TEST(RunRecorder, NeverAppendsToAFileThatHoldsARecord) {
  FakeNvml fake;
  kareus::testing::ScratchDir dir("run_recorder_exists");
  const auto path = dir.path() / "run.jsonl";
  std::ofstream(path) << "earlier measurements\n";
  const Schedule s = load_schedule(kFixture);
  const std::string e = error_of([&] { recording(s, path); });
  EXPECT_NE(e.find("record: path = " + path.string() + ": already holds measurements"),
            std::string::npos)
      << e;
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "earlier measurements\n");
}

TEST(RunRecorder, RankPlaceholderNamesOneFilePerRank) {
  EXPECT_EQ(record_path_for_rank("out/run.{rank}.jsonl", 3), "out/run.3.jsonl");
  EXPECT_EQ(record_path_for_rank("run.jsonl", 3), "run.jsonl");
  FakeNvml fake;
  kareus::testing::ScratchDir dir("run_recorder_rank");
  const Schedule s = load_schedule(kFixture);
  { recording(s, dir.path() / "run.{rank}.jsonl", 5); }
  EXPECT_EQ(measurement::read_record(dir.path() / "run.5.jsonl").header.rank, 5);
}

TEST(RunRecorder, AKilledJobLeavesEveryFinishedLine) {
  FakeNvml fake;
  kareus::testing::ScratchDir dir("run_recorder_killed");
  const auto path = dir.path() / "run.jsonl";
  const Schedule s = load_schedule(kFixture);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto c = recording(s, path);
    play(*c, s);
    c->on_instruction_begin(0, 0, "forward");
    c->wait_until_applied();
    c->on_instruction_end();
    c->on_instruction_begin(0, 1, "forward");  // killed in the middle of this one
    raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  const auto r = measurement::read_record(path);
  EXPECT_FALSE(r.ended);
  EXPECT_EQ(r.iterations.size(), 1u);
  EXPECT_EQ(r.instructions.size(), 7u);
  EXPECT_EQ(r.unfinished_instructions(), 1u);
}

}  // namespace
}  // namespace kareus::runtime
