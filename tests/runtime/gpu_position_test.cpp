// SPDX-License-Identifier: Apache-2.0
// Clocks at the GPU's position: the host launches a whole iteration ahead of a simulated GPU, as
// CUDA lets it, and each instruction must still run at its own clock.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include "common/error_of.hpp"
#include "common/two_stages.hpp"
#include "kareus/runtime/frequency_controller.hpp"
#include "kareus/runtime/gpu_queue.hpp"
#include "simulated_gpu.hpp"

namespace kareus::runtime {
namespace {

using kareus::testing::error_of;
using kareus::testing::SimulatedGpu;
using std::chrono::milliseconds;

// The clock a GPU runs at, set instantly, so a test sees exactly when a change lands.
class InstantClock final : public ClockBackend {
 public:
  explicit InstantClock(std::shared_ptr<std::atomic<double>> clock) : clock_(std::move(clock)) {}
  void set_sm_clock(MHz clock) override { clock_->store(clock.value()); }
  void reset_sm_clock() override { clock_->store(0); }
  std::vector<MHz> supported_sm_clocks() override {
    std::vector<MHz> clocks;
    for (int f = 1410; f >= 210; f -= 15) clocks.push_back(MHz(f));
    return clocks;
  }
  std::string describe() const override { return "instant clock"; }

 private:
  std::shared_ptr<std::atomic<double>> clock_;
};

struct LaunchedAhead {
  std::vector<double> clock_midway;  // per instruction, read halfway through its kernel
  ControllerStats stats;
};

// Stage 0 of the fixture (930 930 900 1020 900 1410 MHz): the host launches every instruction
// and its 100 ms kernel before the GPU starts, then the GPU runs them.
LaunchedAhead launch_ahead(bool at_gpu_position) {
  const Schedule s = load_schedule(kareus::testing::kTwoStagesSchedule);
  auto gpu = std::make_shared<SimulatedGpu>();
  auto clock = std::make_shared<std::atomic<double>>(0);
  ControllerOptions options;
  options.check_gpu_model = false;
  options.restore_on_signals = false;
  if (at_gpu_position) options.gpu_queue = gpu;
  FrequencyController c(s, 0, std::make_unique<InstantClock>(clock), options);
  LaunchedAhead run;
  std::mutex mutex;
  for (const auto& in : s.stages[0].instructions) {
    c.on_instruction_begin(0, in.microbatch, in.direction);
    gpu->launch(milliseconds(100), [&] {
      std::lock_guard<std::mutex> lock(mutex);
      run.clock_midway.push_back(clock->load());
    });
  }
  c.on_step_end();
  gpu->start();
  gpu->drain();
  c.wait_until_applied();
  run.stats = c.stats();
  return run;
}

TEST(GpuPosition, EachInstructionRunsAtItsClockWhenTheHostRunsAhead) {
  const LaunchedAhead run = launch_ahead(true);
  EXPECT_EQ(run.clock_midway, (std::vector<double>{930, 930, 900, 1020, 900, 1410}));
  EXPECT_EQ(run.stats.applied, 5u);
  // The host launched everything before the GPU started: the last change waited for five 100 ms
  // kernels. Each change landed within the first half of its 100 ms instruction.
  EXPECT_GE(run.stats.max_lead, Seconds(0.49));
  EXPECT_LT(run.stats.max_lateness, Seconds(0.05));
  EXPECT_LE(run.stats.total_lateness, run.stats.max_lateness * 5.0);
}

// What the GPU position fixes: applied when the host reaches an instruction, every change has
// landed before the GPU runs the first kernel, so the GPU runs the whole iteration at the last.
TEST(GpuPosition, AtLaunchTheClocksLandBeforeTheGpuGetsThere) {
  const LaunchedAhead run = launch_ahead(false);
  EXPECT_EQ(run.clock_midway, (std::vector<double>(6, 1410)));
  EXPECT_EQ(run.stats.max_lead, Seconds(0));
}

TEST(GpuPosition, StoppingDoesNotWaitForAGpuThatNeverGetsThere) {
  const Schedule s = load_schedule(kareus::testing::kTwoStagesSchedule);
  auto gpu = std::make_shared<SimulatedGpu>();  // never started
  auto clock = std::make_shared<std::atomic<double>>(0);
  ControllerOptions options;
  options.check_gpu_model = false;
  options.restore_on_signals = false;
  options.gpu_queue = gpu;
  {
    FrequencyController c(s, 0, std::make_unique<InstantClock>(clock), options);
    c.on_instruction_begin(0, 0, "forward");
    c.restore_default_clocks();
    EXPECT_EQ(c.stats().applied, 0u);
  }
  gpu->start();  // the marker fires after the controller is gone
  gpu->drain();
  EXPECT_EQ(clock->load(), 0);
}

TEST(GpuPosition, AReleasedControllerFollowsTheScheduleWithoutClocks) {
  const Schedule s = load_schedule(kareus::testing::kTwoStagesSchedule);
  auto clock = std::make_shared<std::atomic<double>>(0);
  ControllerOptions options;
  options.check_gpu_model = false;
  options.restore_on_signals = false;
  FrequencyController c(s, 0, std::make_unique<InstantClock>(clock), options);
  c.on_instruction_begin(0, 0, "forward");
  c.wait_until_applied();
  EXPECT_EQ(clock->load(), 930);
  ::testing::internal::CaptureStderr();
  c.release_after_signal(SIGTERM);
  EXPECT_EQ(clock->load(), 0);
  c.on_instruction_begin(0, 1, "forward");
  c.on_instruction_begin(0, 0, "backward");
  c.wait_until_applied();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err,
            "kareus: warning: SIGTERM reset the clocks of stage 0; the job goes on at the GPU's "
            "default clocks, and its time and energy are no longer the schedule's\n");
  EXPECT_EQ(clock->load(), 0);
  EXPECT_NE(error_of([&] { c.on_instruction_begin(0, 0, "forward"); }).find("order violated"),
            std::string::npos);
}

// Through the driver's cuLaunchHostFunc (the fake libcuda: a 50 ms kernel before each marker).
TEST(CudaStreamQueue, ClocksLandAsTheStreamReachesThem) {
  setenv("KAREUS_CUDA_LIBRARY", KAREUS_FAKE_CUDA_PATH, 1);
  setenv("KAREUS_FAKE_CUDA_KERNEL_MS", "50", 1);
  const Schedule s = load_schedule(kareus::testing::kTwoStagesSchedule);
  auto clock = std::make_shared<std::atomic<double>>(0);
  ControllerOptions options;
  options.check_gpu_model = false;
  options.restore_on_signals = false;
  options.gpu_queue = cuda_stream_queue(0x1234);
  FrequencyController c(s, 0, std::make_unique<InstantClock>(clock), options);
  for (const auto& in : s.stages[0].instructions)
    c.on_instruction_begin(0, in.microbatch, in.direction);
  EXPECT_EQ(clock->load(), 0);  // the host is done, the stream has not reached the first marker
  c.wait_until_applied();
  EXPECT_EQ(clock->load(), 1410);
  EXPECT_EQ(c.stats().applied, 5u);
  EXPECT_GE(c.stats().max_lead, Seconds(0.24));  // five markers, 50 ms apart
  const std::string bad = error_of([] { cuda_stream_queue(0xdead)->enqueue_marker([] {}); });
  unsetenv("KAREUS_CUDA_LIBRARY");
  EXPECT_EQ(bad, "cuLaunchHostFunc on CUDA stream 0xdead failed: CUDA_ERROR_INVALID_HANDLE (400)");
}

TEST(CudaStreamQueue, AMissingDriverIsOneDeviceError) {
  setenv("KAREUS_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  const std::string message = error_of([] { cuda_stream_queue(0); });
  unsetenv("KAREUS_CUDA_LIBRARY");
  EXPECT_EQ(message.rfind("CUDA stream markers: cannot load /nonexistent/libcuda.so.1 (", 0), 0u)
      << message;
}

}  // namespace
}  // namespace kareus::runtime
