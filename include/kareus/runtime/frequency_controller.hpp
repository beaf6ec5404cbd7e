// SPDX-License-Identifier: Apache-2.0
// Applies a schedule's per-instruction SM clocks during training. The training loop calls
// on_instruction_begin() before each forward/backward; the call checks it against the schedule's
// order and hands the clock to a worker thread, so the loop never waits on NVML or kareusd. With
// a GpuQueue (a CUDA stream) the worker applies each change when the GPU reaches the instruction
// rather than when the host launches it. The GPU's default clocks come back on destruction
// (normal exit, exceptions), at process exit for a controller never destroyed, and on SIGINT,
// SIGTERM, SIGHUP, SIGQUIT and SIGPIPE unless ignored (then the signal goes on to the handler the
// program had, so the process still dies, Python still raises KeyboardInterrupt, or the program's
// own handler runs). SIGKILL cannot be caught: use kareusd where that matters.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kareus/runtime/clock_backend.hpp"
#include "kareus/runtime/gpu_queue.hpp"
#include "kareus/runtime/job_check.hpp"
#include "kareus/runtime/run_recorder.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus::runtime {

struct ControllerOptions {
  // Off when the host program restores clocks from its own signal handling.
  bool restore_on_signals = true;
  // Checked against the schedule before the first clock change (job_check.hpp); a field left at
  // its default is not checked. Its gpu_name is NVML's (or kareusd's) when check_gpu_model.
  JobShape job;
  // The schedule's `gpu` must be the model NVML (or kareusd) reports for the GPU.
  bool check_gpu_model = true;
  // A schedule with step_clocks_mhz (partition-granularity clocks) is refused unless the host
  // program reports every step of an instruction with on_instruction_step().
  bool partition_clocks = false;
  // Lock the memory clock at its maximum from construction until the clocks are restored, as
  // Zeus does, so that memory clock changes do not blur SM clock decisions (NVML only).
  bool lock_memory_clock = false;
  // Where the GPU is in its queued work (a CUDA stream): each clock change waits for the GPU to
  // reach its instruction. None: a change is applied as soon as the host reaches the instruction.
  std::shared_ptr<GpuQueue> gpu_queue;
  // Write a measurement record (run_recorder.hpp) of every instruction and iteration: spans begin
  // and end where the GPU reaches them with a gpu_queue, where the host does without one.
  std::optional<RecordOptions> record;
};

struct ControllerStats {
  std::size_t instructions = 0;   // on_instruction_begin calls accepted
  std::size_t clock_changes = 0;  // clocks handed to the backend
  std::size_t skipped = 0;        // same clock as the previous instruction: no call
  std::size_t applied = 0;        // clock changes the backend has made
  // Per applied change: how far the GPU was behind the host (from the host reaching the
  // instruction to the GPU reaching it; 0 without a GpuQueue), and how late the clock landed
  // after the GPU reached the instruction (the worker's wake-up and the NVML or kareusd call).
  Seconds max_lead{0};
  Seconds max_lateness{0};
  Seconds total_lateness{0};
};

// One clock change as it reached the GPU: when the host asked for it, when the GPU reached its
// instruction, when the backend call returned. Every applied change goes through one place
// (FrequencyController::record_applied), where ControllerStats is kept.
struct AppliedClock {
  using Time = std::chrono::steady_clock::time_point;
  int iteration = 0;            // on_step_end calls before the change was asked for
  std::size_t instruction = 0;  // its position in the stage's order
  MHz clock;
  Time requested;
  Time reached;
  Time applied;
};

class FrequencyController {
 public:
  // Checks every clock of `stage` against the backend's supported clocks before training starts.
  FrequencyController(const Schedule& schedule, int stage, std::unique_ptr<ClockBackend> backend,
                      ControllerOptions options = {});
  ~FrequencyController();
  FrequencyController(const FrequencyController&) = delete;
  FrequencyController& operator=(const FrequencyController&) = delete;

  // Throws Error when the call is not the stage's next instruction, when an earlier clock change
  // failed, or after the default clocks were restored.
  void on_instruction_begin(int stage, int microbatch, const std::string& direction);
  // Step `step` of the current instruction begins (partition_clocks only): its clock from
  // step_clocks_mhz is queued when it differs from the previous one. Steps run in order; an
  // instruction without step clocks keeps its clock_mhz throughout.
  void on_instruction_step(int step);
  // The current instruction ends (optional): with a record, its span ends here rather than where
  // the next instruction begins, so waits between instructions are not counted in it.
  void on_instruction_end();
  // End of one training iteration: every instruction must have run; the schedule starts over.
  void on_step_end();
  // Blocks until every queued clock change reached the backend; rethrows a failed change.
  void wait_until_applied();
  // Drops queued changes and resets the GPU's clocks; later calls are refused. Idempotent.
  void restore_default_clocks();
  // A termination signal arrived (restore_on_signal.cpp): drops queued changes and resets the
  // GPU's clocks, and the program's own handler may let the job go on (to save a checkpoint):
  // later calls are still checked against the schedule but change no clock (a warning says so
  // once). Does nothing after restore_default_clocks().
  void release_after_signal(int signo);
  ControllerStats stats() const;
  int stage() const { return stage_; }
  // The record's file, or empty when not recording.
  std::filesystem::path record_path() const;

 private:
  struct Marker;
  struct MarkerBoard;
  struct Pending {
    MHz clock;
    AppliedClock::Time requested;
    std::shared_ptr<Marker> marker;  // null without a GpuQueue
    int iteration = 0;
    std::size_t instruction = 0;
  };

  void worker_loop();
  // Waits until the GPU reaches `pending`'s instruction; false when the controller stops first.
  bool wait_for_gpu(const Pending& pending, AppliedClock::Time& reached);
  void record_applied(const AppliedClock& applied);
  void throw_if_failed() const;
  void throw_if_stopped() const;
  // True (after a one-time warning) when a signal released the controller: no clock changes.
  bool released_locked();
  void request_locked(MHz clock);
  // Runs `record` on the recorder where the GPU is now in its queue (with a GpuQueue), else at
  // once; nothing without a record. Under mutex_, before any clock change it precedes is queued.
  void record_locked(std::function<void(RunRecorder&)> record);
  // Stops waiting for the GPU, and resets the memory and SM clocks; no clock is set afterwards.
  void reset_now();
  // Under backend_mutex_ (or before the worker exists).
  void reset_memory_clock_locked();

  std::vector<ScheduleInstruction> instructions_;
  int stage_;
  std::unique_ptr<ClockBackend> backend_;
  ControllerOptions options_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Pending> queue_;
  std::shared_ptr<MarkerBoard> board_;
  bool busy_ = false;
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::size_t position_ = 0;
  int iteration_ = 0;
  bool ended_ = false;  // on_instruction_end was called for the current instruction
  int next_step_ = 0;
  std::optional<MHz> last_requested_;
  ControllerStats stats_;
  int released_by_ = 0;  // the signal that released the controller; 0: none
  bool warned_released_ = false;

  // Serialises backend calls between the worker and restore_default_clocks().
  std::mutex backend_mutex_;
  bool locked_ = false;  // a clock was set and not yet reset
  bool memory_locked_ = false;
  bool restored_ = false;  // no more clock changes may reach the GPU

  std::shared_ptr<RunRecorder> recorder_;
  std::thread worker_;
};

}  // namespace kareus::runtime
