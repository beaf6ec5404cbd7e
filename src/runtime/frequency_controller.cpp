// SPDX-License-Identifier: Apache-2.0
#include "kareus/runtime/frequency_controller.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>

#include "kareus/core/error.hpp"
#include "kareus/runtime/job_check.hpp"
#include "quiet_thread.hpp"
#include "restore_on_signal.hpp"

namespace kareus::runtime {
namespace {

const StageSchedule& stage_of(const Schedule& schedule, int stage) {
  if (stage < 0 || stage >= static_cast<int>(schedule.stages.size())) {
    throw Error::invalid("frequency controller", "stage", std::to_string(stage),
                         fmt::format("the schedule has stages 0..{}", schedule.stages.size() - 1));
  }
  return schedule.stages[static_cast<std::size_t>(stage)];
}

void check_supported(const StageSchedule& stage, ClockBackend& backend) {
  const std::vector<MHz> supported = backend.supported_sm_clocks();
  for (std::size_t i = 0; i < stage.instructions.size(); ++i) {
    std::vector<MHz> clocks = stage.instructions[i].step_clocks;
    clocks.push_back(stage.instructions[i].clock);
    for (const MHz clock : clocks) {
      if (std::find(supported.begin(), supported.end(), clock) != supported.end()) continue;
      throw Error(fmt::format(
          "frequency controller: stage {} instruction {} asks for {} MHz, which {} does not "
          "support (it supports {} to {} MHz)",
          stage.stage, i, clock.value(), backend.describe(),
          supported.empty() ? 0.0 : supported.back().value(),
          supported.empty() ? 0.0 : supported.front().value()));
    }
  }
}

// Ignoring step_clocks_mhz would run a plan other than the one whose time and energy were
// predicted, so it is applied only when the host program can report the steps.
void check_step_clocks(const StageSchedule& stage, const ControllerOptions& options) {
  if (options.partition_clocks) return;
  for (std::size_t i = 0; i < stage.instructions.size(); ++i) {
    if (stage.instructions[i].step_clocks.empty()) continue;
    throw Error(fmt::format(
        "frequency controller: stage {} instruction {} has step_clocks_mhz (partition-granularity "
        "clocks, planned with {} partition), which this controller would ignore; enable "
        "partition_clocks and report every step with on_instruction_step(), or plan with {} "
        "instruction",
        stage.stage, i, field_ref("clock_granularity"), field_ref("clock_granularity")));
  }
}

// Called from destructors, the signal watcher and atexit: nobody can catch a failure there.
void reset_or_report(ClockBackend& backend, bool& locked, void (ClockBackend::*reset)(),
                     const char* what) {
  if (!locked) return;
  try {
    (backend.*reset)();
    locked = false;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kareus: could not restore the %s of %s: %s\n", what,
                 backend.describe().c_str(), e.what());
  }
}

Seconds seconds_between(AppliedClock::Time from, AppliedClock::Time to) {
  return Seconds(std::chrono::duration<double>(to - from).count());
}

}  // namespace

// A marker on the GPU's queue. The GpuQueue's thread sets `reached`, possibly after the
// controller is gone, so markers and their board are shared with the callbacks.
struct FrequencyController::Marker {
  bool reached = false;
  AppliedClock::Time at;
};

struct FrequencyController::MarkerBoard {
  std::mutex mutex;
  std::condition_variable changed;
  bool abandoned = false;  // the controller stopped: nobody waits for markers any more
};

FrequencyController::FrequencyController(const Schedule& schedule, int stage,
                                         std::unique_ptr<ClockBackend> backend,
                                         ControllerOptions options)
    : instructions_(stage_of(schedule, stage).instructions),
      stage_(stage),
      backend_(std::move(backend)),
      options_(std::move(options)),
      board_(std::make_shared<MarkerBoard>()) {
  // Everything is checked before the worker exists, so a refused schedule changes no clock.
  JobShape job = options_.job;
  job.gpu_name = options_.check_gpu_model ? backend_->gpu_name() : std::string();
  check_job(schedule, job);
  check_step_clocks(stage_of(schedule, stage), options_);
  check_supported(stage_of(schedule, stage), *backend_);
  if (options_.record) {
    recorder_ = std::make_shared<RunRecorder>(
        schedule, stage,
        options_.gpu_queue ? measurement::Boundaries::kGpu : measurement::Boundaries::kHost,
        *options_.record);
  }
  if (options_.lock_memory_clock) {
    memory_locked_ = true;  // a failed lock may still have changed the clock
    try {
      backend_->lock_memory_clock_at_max();
    } catch (...) {
      reset_memory_clock_locked();
      throw;
    }
  }
  worker_ = quiet_thread([this] { worker_loop(); });
  try {
    register_for_restore(this, options_.restore_on_signals);
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    worker_.join();
    reset_memory_clock_locked();
    throw;
  }
}

void FrequencyController::reset_memory_clock_locked() {
  reset_or_report(*backend_, memory_locked_, &ClockBackend::reset_memory_clock, "memory clock");
}

FrequencyController::~FrequencyController() {
  unregister_for_restore(this);
  restore_default_clocks();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
  if (recorder_) recorder_->close();
}

void FrequencyController::worker_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    const Pending pending = queue_.front();
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    std::exception_ptr failure;
    AppliedClock::Time reached;
    if (wait_for_gpu(pending, reached)) {
      std::lock_guard<std::mutex> backend_lock(backend_mutex_);
      if (!restored_) {
        try {
          locked_ = true;  // a failed set may still have changed the clock
          backend_->set_sm_clock(pending.clock);
          record_applied({pending.iteration, pending.instruction, pending.clock, pending.requested,
                          reached, std::chrono::steady_clock::now()});
        } catch (...) {
          failure = std::current_exception();
        }
      }
    }
    lock.lock();
    busy_ = false;
    if (failure) {
      failure_ = failure;
      queue_.clear();
    }
    idle_.notify_all();
  }
}

bool FrequencyController::wait_for_gpu(const Pending& pending, AppliedClock::Time& reached) {
  if (!pending.marker) {
    reached = pending.requested;
    return true;
  }
  std::unique_lock<std::mutex> lock(board_->mutex);
  board_->changed.wait(lock, [&] { return pending.marker->reached || board_->abandoned; });
  reached = pending.marker->at;
  return pending.marker->reached && !board_->abandoned;
}

void FrequencyController::record_applied(const AppliedClock& applied) {
  const Seconds lead = seconds_between(applied.requested, applied.reached);
  const Seconds lateness = seconds_between(applied.reached, applied.applied);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.applied;
    stats_.max_lead = std::max(stats_.max_lead, lead);
    stats_.max_lateness = std::max(stats_.max_lateness, lateness);
    stats_.total_lateness += lateness;
  }
  if (recorder_)
    recorder_->clock_applied(applied.iteration, applied.instruction, applied.clock, lead, lateness);
}

void FrequencyController::record_locked(std::function<void(RunRecorder&)> record) {
  if (!recorder_) return;
  if (!options_.gpu_queue) {
    record(*recorder_);
    return;
  }
  recorder_->marker_queued();
  options_.gpu_queue->enqueue_marker([recorder = recorder_, record = std::move(record)] {
    record(*recorder);
    recorder->marker_reached();
  });
}

std::filesystem::path FrequencyController::record_path() const {
  return recorder_ ? recorder_->path() : std::filesystem::path();
}

void FrequencyController::throw_if_failed() const {
  if (!failure_) return;
  try {
    std::rethrow_exception(failure_);
  } catch (const std::exception& e) {
    throw Error::device(fmt::format("frequency controller: a clock change on stage {} failed: {}",
                                    stage_, e.what()));
  }
}

void FrequencyController::throw_if_stopped() const {
  if (stopping_) {
    throw Error(fmt::format(
        "frequency controller: stage {} was stopped and its default clocks restored", stage_));
  }
}

bool FrequencyController::released_locked() {
  if (released_by_ == 0) return false;
  if (!warned_released_) {
    warned_released_ = true;
    std::fprintf(stderr,
                 "kareus: warning: %s reset the clocks of stage %d; the job goes on at the GPU's "
                 "default clocks, and its time and energy are no longer the schedule's\n",
                 signal_name(released_by_).c_str(), stage_);
  }
  return true;
}

void FrequencyController::on_instruction_begin(int stage, int microbatch,
                                               const std::string& direction) {
  std::lock_guard<std::mutex> lock(mutex_);
  throw_if_failed();
  throw_if_stopped();
  if (stage != stage_) {
    throw Error(
        fmt::format("frequency controller for stage {} called for stage {}", stage_, stage));
  }
  if (position_ >= instructions_.size()) {
    throw Error(fmt::format(
        "frequency controller: stage {} runs {} instructions per iteration and all have run; "
        "call on_step_end() before the next iteration ({} of microbatch {} called)",
        stage_, instructions_.size(), direction, microbatch));
  }
  const ScheduleInstruction& expected = instructions_[position_];
  if (expected.microbatch != microbatch || expected.direction != direction) {
    throw Error(fmt::format(
        "frequency controller: schedule order violated on stage {} at instruction {}: the "
        "schedule runs the {} of microbatch {}, the training loop called the {} of microbatch {}",
        stage_, position_, expected.direction, expected.microbatch, direction, microbatch));
  }
  record_locked([index = position_](RunRecorder& r) { r.instruction_begin(index); });
  ++position_;
  next_step_ = 0;
  ended_ = false;
  ++stats_.instructions;
  if (!released_locked()) request_locked(expected.clock);
}

void FrequencyController::on_instruction_end() {
  std::lock_guard<std::mutex> lock(mutex_);
  throw_if_failed();
  throw_if_stopped();
  if (position_ == 0 || ended_) {
    throw Error(fmt::format(
        "frequency controller: on_instruction_end on stage {} without an instruction that began "
        "and has not ended",
        stage_));
  }
  ended_ = true;
  record_locked([](RunRecorder& r) { r.instruction_end(); });
}

void FrequencyController::request_locked(MHz clock) {
  if (last_requested_ == clock) {
    ++stats_.skipped;
    return;
  }
  last_requested_ = clock;
  ++stats_.clock_changes;
  Pending pending{clock, std::chrono::steady_clock::now(), nullptr, iteration_,
                  position_ == 0 ? 0 : position_ - 1};
  if (options_.gpu_queue) {
    pending.marker = std::make_shared<Marker>();
    options_.gpu_queue->enqueue_marker([marker = pending.marker, board = board_] {
      {
        std::lock_guard<std::mutex> lock(board->mutex);
        marker->reached = true;
        marker->at = std::chrono::steady_clock::now();
      }
      board->changed.notify_all();
    });
  }
  queue_.push_back(std::move(pending));
  wake_.notify_one();
}

void FrequencyController::on_instruction_step(int step) {
  std::lock_guard<std::mutex> lock(mutex_);
  throw_if_failed();
  throw_if_stopped();
  if (!options_.partition_clocks) {
    throw Error("frequency controller: on_instruction_step needs partition_clocks enabled");
  }
  if (position_ == 0) {
    throw Error(fmt::format(
        "frequency controller: step {} reported on stage {} before any instruction began", step,
        stage_));
  }
  const ScheduleInstruction& current = instructions_[position_ - 1];
  const int steps = std::max<int>(1, static_cast<int>(current.step_clocks.size()));
  if (step != next_step_ || step >= steps) {
    throw Error(fmt::format(
        "frequency controller: stage {} instruction {} ({} of microbatch {}) has steps 0..{} "
        "and expects step {} next; step {} was reported",
        stage_, position_ - 1, current.direction, current.microbatch, steps - 1, next_step_, step));
  }
  ++next_step_;
  if (!current.step_clocks.empty() && !released_locked())
    request_locked(current.step_clocks[static_cast<std::size_t>(step)]);
}

void FrequencyController::on_step_end() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    throw_if_failed();
    if (position_ != instructions_.size()) {
      throw Error(fmt::format(
          "frequency controller: iteration of stage {} ended after {} of its {} instructions",
          stage_, position_, instructions_.size()));
    }
    position_ = 0;
    ++iteration_;
    record_locked([](RunRecorder& r) { r.iteration_end(); });
  }
  // Once per iteration, outside mutex_: the signal registry locks controllers under its own lock.
  if (options_.restore_on_signals) warn_of_replaced_handlers();
}

void FrequencyController::wait_until_applied() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
    throw_if_failed();
  }
  if (recorder_) recorder_->wait_for_markers();
}

void FrequencyController::restore_default_clocks() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  reset_now();
  // The job is over for this controller: its record ends here, not when the object goes away
  // (Python keeps it alive after the stage closes).
  if (recorder_) recorder_->close();
}

void FrequencyController::release_after_signal(int signo) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    released_by_ = signo;
    queue_.clear();
  }
  reset_now();
}

void FrequencyController::reset_now() {
  {
    std::lock_guard<std::mutex> lock(board_->mutex);
    board_->abandoned = true;
  }
  board_->changed.notify_all();
  std::lock_guard<std::mutex> backend_lock(backend_mutex_);
  restored_ = true;
  reset_memory_clock_locked();
  reset_or_report(*backend_, locked_, &ClockBackend::reset_sm_clock, "default clocks");
}

ControllerStats FrequencyController::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace kareus::runtime
