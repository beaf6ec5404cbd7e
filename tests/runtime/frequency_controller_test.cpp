// SPDX-License-Identifier: Apache-2.0
#include "kareus/runtime/frequency_controller.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>

#include "child_process.hpp"
#include "common/error_of.hpp"
#include "common/two_stages.hpp"
#include "fake_nvml/fake_nvml_fixture.hpp"

namespace kareus::runtime {
namespace {

using kareus::testing::error_of;

using kareus::testing::ChildProcess;
using kareus::testing::FakeNvml;
using kareus::testing::two_gpu_script;
using Lines = std::vector<std::string>;

using kareus::testing::kTwoStagesSchedule;

std::unique_ptr<FrequencyController> controller_for(int stage, const Schedule& schedule) {
  auto nvml = std::make_shared<const nvml::Nvml>();
  return std::make_unique<FrequencyController>(schedule, stage,
                                               std::make_unique<NvmlClockBackend>(nvml, 0));
}

void run_iteration(FrequencyController& c, const Schedule& s) {
  for (const auto& in : s.stages[c.stage()].instructions) {
    c.on_instruction_begin(c.stage(), in.microbatch, in.direction);
  }
  c.on_step_end();
}

TEST(FrequencyController, AppliesEachClockOnceAndRestoresAtTheEnd) {
  FakeNvml fake;
  const Schedule s = load_schedule(kTwoStagesSchedule);
  {
    auto c = controller_for(0, s);
    run_iteration(*c, s);  // 930 930 900 1020 900 1410
    c->wait_until_applied();
    const ControllerStats stats = c->stats();
    EXPECT_EQ(stats.instructions, 6u);
    EXPECT_EQ(stats.clock_changes, 5u);
    EXPECT_EQ(stats.skipped, 1u);
  }
  EXPECT_EQ(
      fake.log(),
      (Lines{"nvmlDeviceSetGpuLockedClocks 0 930 930", "nvmlDeviceSetGpuLockedClocks 0 900 900",
             "nvmlDeviceSetGpuLockedClocks 0 1020 1020", "nvmlDeviceSetGpuLockedClocks 0 900 900",
             "nvmlDeviceSetGpuLockedClocks 0 1410 1410", "nvmlDeviceResetGpuLockedClocks 0"}));
}

// The threads the controller starts (its worker and the signal watcher) block the termination
// signals, so that a signal sent to the process lands on one of the program's own threads, where
// Python notices it at once (src/runtime/quiet_thread.hpp). A thread's mask is private to it, so
// it is read from /proc.
TEST(FrequencyController, ItsThreadsLeaveTerminationSignalsToTheProgram) {
  FakeNvml fake;
  const auto c = controller_for(0, load_schedule(kTwoStagesSchedule));
  int threads = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    if (std::stoi(task.path().filename().string()) == gettid()) continue;
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("SigBlk:", 0) != 0) continue;
      const unsigned long long blocked = std::stoull(line.substr(7), nullptr, 16);
      for (int signo : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE})
        EXPECT_TRUE((blocked >> (signo - 1)) & 1) << task.path() << ": " << strsignal(signo);
      ++threads;
    }
  }
  EXPECT_GE(threads, 2);
}

TEST(FrequencyController, StartsOverAfterEachStep) {
  FakeNvml fake;
  const Schedule s = load_schedule(kTwoStagesSchedule);
  {
    auto c = controller_for(1, s);  // 1200 1200 1200 1110 1110 1110
    run_iteration(*c, s);
    run_iteration(*c, s);
    c->wait_until_applied();
  }
  EXPECT_EQ(
      fake.log(),
      (Lines{"nvmlDeviceSetGpuLockedClocks 0 1200 1200", "nvmlDeviceSetGpuLockedClocks 0 1110 1110",
             "nvmlDeviceSetGpuLockedClocks 0 1200 1200", "nvmlDeviceSetGpuLockedClocks 0 1110 1110",
             "nvmlDeviceResetGpuLockedClocks 0"}));
}

TEST(FrequencyController, RefusesCallsOutOfScheduleOrder) {
  FakeNvml fake;
  const Schedule s = load_schedule(kTwoStagesSchedule);
  auto c = controller_for(0, s);
  EXPECT_EQ(error_of([&] { c->on_instruction_begin(0, 1, "forward"); }),
            "frequency controller: schedule order violated on stage 0 at instruction 0: the "
            "schedule runs the forward of microbatch 0, the training loop called the forward of "
            "microbatch 1");
  EXPECT_EQ(error_of([&] { c->on_instruction_begin(1, 0, "forward"); }),
            "frequency controller for stage 0 called for stage 1");
  c->on_instruction_begin(0, 0, "forward");
  EXPECT_EQ(error_of([&] { c->on_instruction_begin(0, 1, "backward"); }),
            "frequency controller: schedule order violated on stage 0 at instruction 1: the "
            "schedule runs the forward of microbatch 1, the training loop called the backward of "
            "microbatch 1");
  EXPECT_EQ(error_of([&] { c->on_step_end(); }),
            "frequency controller: iteration of stage 0 ended after 1 of its 6 instructions");
}

TEST(FrequencyController, RequiresStepEndBetweenIterations) {
  FakeNvml fake;
  const Schedule s = load_schedule(kTwoStagesSchedule);
  auto c = controller_for(1, s);
  for (const auto& in : s.stages[1].instructions)
    c->on_instruction_begin(1, in.microbatch, in.direction);
  EXPECT_EQ(error_of([&] { c->on_instruction_begin(1, 0, "forward"); }),
            "frequency controller: stage 1 runs 6 instructions per iteration and all have run; "
            "call on_step_end() before the next iteration (forward of microbatch 0 called)");
}

TEST(FrequencyController, RestoresWhenAnExceptionUnwindsTheTrainingLoop) {
  FakeNvml fake;
  const Schedule s = load_schedule(kTwoStagesSchedule);
  try {
    auto c = controller_for(0, s);
    c->on_instruction_begin(0, 0, "forward");
    c->wait_until_applied();
    throw std::runtime_error("loss is NaN");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(fake.log(),
            (Lines{"nvmlDeviceSetGpuLockedClocks 0 930 930", "nvmlDeviceResetGpuLockedClocks 0"}));
}

TEST(FrequencyController, NeverTouchesAGpuItDidNotLock) {
  FakeNvml fake;
  const Schedule s = load_schedule(kTwoStagesSchedule);
  { auto c = controller_for(0, s); }
  EXPECT_TRUE(fake.log().empty());
}

TEST(FrequencyController, RejectsClocksTheGpuDoesNotSupport) {
  FakeNvml fake;
  Schedule s = load_schedule(kTwoStagesSchedule);
  s.stages[0].instructions[3].clock = MHz(1405);
  EXPECT_EQ(error_of([&] { controller_for(0, s); }),
            "frequency controller: stage 0 instruction 3 asks for 1405 MHz, which NVML gpu 0 "
            "does not support (it supports 210 to 1410 MHz)");
  EXPECT_EQ(error_of([&] { controller_for(2, s); }),
            "frequency controller: stage = 2: the schedule has stages 0..1");
}

TEST(FrequencyController, AFailedClockChangeFailsTheNextCallLoudly) {
  auto script = two_gpu_script();
  script["devices"][0]["errors"]["nvmlDeviceSetGpuLockedClocks"] = "NO_PERMISSION";
  FakeNvml fake(script);
  const Schedule s = load_schedule(kTwoStagesSchedule);
  auto c = controller_for(0, s);
  c->on_instruction_begin(0, 0, "forward");
  const std::string msg = error_of([&] { c->wait_until_applied(); });
  EXPECT_EQ(msg.rfind("frequency controller: a clock change on stage 0 failed: NVML "
                      "nvmlDeviceSetGpuLockedClocks(gpu 0, 930 MHz): Insufficient Permissions",
                      0),
            0u)
      << msg;
  EXPECT_EQ(error_of([&] { c->on_instruction_begin(0, 1, "forward"); }), msg);
}

// A handler the program installs after the controller replaces Kareus's: said once per signal.
TEST(FrequencyController, WarnsOnceWhenTheProgramTakesOverASignal) {
  FakeNvml fake;
  const Schedule s = load_schedule(kTwoStagesSchedule);
  auto c = controller_for(1, s);
  struct sigaction program = {}, kareus = {};
  program.sa_handler = [](int) {};
  sigemptyset(&program.sa_mask);
  sigaction(SIGHUP, &program, &kareus);
  ::testing::internal::CaptureStderr();
  run_iteration(*c, s);
  run_iteration(*c, s);
  const std::string err = ::testing::internal::GetCapturedStderr();
  sigaction(SIGHUP, &kareus, nullptr);
  EXPECT_EQ(err,
            "kareus: warning: the program replaced Kareus's SIGHUP handler; SIGHUP now reaches "
            "the program without resetting the clocks, which come back when the frequency "
            "controller is closed or the process exits (install the handler before creating the "
            "controller to have both)\n");
}

TEST(FrequencyController, RefusesCallsAfterRestore) {
  FakeNvml fake;
  const Schedule s = load_schedule(kTwoStagesSchedule);
  auto c = controller_for(0, s);
  c->on_instruction_begin(0, 0, "forward");
  c->wait_until_applied();
  c->restore_default_clocks();
  c->restore_default_clocks();
  EXPECT_EQ(error_of([&] { c->on_instruction_begin(0, 1, "forward"); }),
            "frequency controller: stage 0 was stopped and its default clocks restored");
  const Lines log = fake.log();
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back(), "nvmlDeviceResetGpuLockedClocks 0");
  EXPECT_EQ(std::count(log.begin(), log.end(), "nvmlDeviceResetGpuLockedClocks 0"), 1);
}

// The child locks 930 MHz on GPU 0 (stage 0's first instruction), prints "ready" and waits.
class ControllerChild : public ::testing::Test {
 protected:
  std::unique_ptr<ChildProcess> start(const std::string& mode) {
    auto child = std::make_unique<ChildProcess>(std::vector<std::string>{
        KAREUS_RUNTIME_CHILD_PATH, "controller", kTwoStagesSchedule, "0", mode});
    EXPECT_EQ(child->read_line(), "ready");
    return child;
  }
  void expect_restored_then_killed(int signo) {
    auto child = start("signal");
    child->signal(signo);
    const int status = child->wait();
    ASSERT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), signo);
    EXPECT_EQ(fake_.log(), kLockedThenReset);
  }
  const Lines kLockedThenReset = {"nvmlDeviceSetGpuLockedClocks 0 930 930",
                                  "nvmlDeviceResetGpuLockedClocks 0"};
  FakeNvml fake_;
};

TEST_F(ControllerChild, SigtermRestoresThenTerminates) {
  expect_restored_then_killed(SIGTERM);
}

TEST_F(ControllerChild, SigintRestoresThenTerminates) {
  expect_restored_then_killed(SIGINT);
}

// An SSH hang-up, a quit from the terminal and a write to a closed pipe used to leave the GPU
// locked at the last clock.
TEST_F(ControllerChild, SighupSigquitAndSigpipeRestoreThenTerminate) {
  for (int signo : {SIGHUP, SIGQUIT, SIGPIPE}) {
    SCOPED_TRACE(strsignal(signo));
    std::filesystem::remove(fake_.log_path());
    expect_restored_then_killed(signo);
  }
}

TEST_F(ControllerChild, AnIgnoredSignalStaysIgnored) {
  auto child = start("nohup");
  child->signal(SIGHUP);  // delivered before SIGTERM (lower number): would kill if caught
  child->signal(SIGTERM);
  const int status = child->wait();
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(fake_.log(), kLockedThenReset);
}

// A trainer that saves a checkpoint on SIGINT (or SIGTERM, as Megatron's exit signal handler)
// finishes its iteration: the clocks are reset at the signal, the program's handler runs, and the
// controller goes on checking the schedule without setting clocks.
TEST_F(ControllerChild, SignalReachesTheProgramsOwnHandlerAfterRestore) {
  auto child = start("chained");
  child->signal(SIGINT);
  EXPECT_EQ(child->read_line(), "accepted");
  const int status = child->wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(fake_.log(), kLockedThenReset);
}

TEST_F(ControllerChild, ExitWithoutDestroyingTheControllerRestores) {
  auto child = start("exit");
  const int status = child->wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(fake_.log(), kLockedThenReset);
}

}  // namespace
}  // namespace kareus::runtime
