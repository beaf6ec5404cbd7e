// SPDX-License-Identifier: Apache-2.0
#include "kareus/runtime/run_recorder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "kareus/core/error.hpp"

namespace kareus::runtime {
namespace {

std::function<double()> steady_seconds() {
  return [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
}

std::string utc_now() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
}

// Refuses to append a second record to a file that has one: the reader expects one header.
int open_new_record(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error::io(
        fmt::format("record {}: cannot open for writing: {}", path.string(), std::strerror(errno)));
  if (::lseek(fd, 0, SEEK_END) > 0) {
    ::close(fd);
    throw Error::invalid("record", "path", path.string(),
                         "already holds measurements; give a new file (earlier records are never "
                         "overwritten)");
  }
  return fd;
}

}  // namespace

std::filesystem::path record_path_for_rank(const std::filesystem::path& path, int rank) {
  std::string text = path.string();
  const std::string placeholder = "{rank}";
  for (std::size_t at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at))
    text.replace(at, placeholder.size(), std::to_string(rank));
  return text;
}

RunRecorder::RunRecorder(const Schedule& schedule, int stage, measurement::Boundaries boundaries,
                         RecordOptions options)
    : stage_(schedule.stages.at(static_cast<std::size_t>(stage))),
      predicted_energy_per_gpu_(measurement::predicted_energy_per_gpu(schedule)),
      predicted_iteration_time_(schedule.predicted.iteration_time),
      options_(std::move(options)),
      path_(record_path_for_rank(options_.path, options_.rank)) {
  if (!options_.nvml) options_.nvml = std::make_shared<const nvml::Nvml>();
  if (!options_.clock) options_.clock = steady_seconds();
  const nvml::Nvml& nvml = *options_.nvml;
  measurement::RecordHeader header;
  header.rank = options_.rank;
  header.stage = stage;
  header.boundaries = boundaries;
  header.gpu = {options_.gpu, nvml.uuid(options_.gpu), nvml.name(options_.gpu),
                nvml.driver_version(), nvml.power_limit(options_.gpu)};
  header.started_utc = utc_now();
  header.schedule = schedule;
  // Read before the file exists, so a GPU without an energy counter leaves no file behind.
  origin_ = read();
  fd_ = open_new_record(path_);
  write_locked(measurement::header_line(header));
}

RunRecorder::~RunRecorder() {
  close();
}

RunRecorder::Reading RunRecorder::read() const {
  return {options_.clock(), options_.nvml->total_energy(options_.gpu).value()};
}

void RunRecorder::write_locked(const std::string& line) {
  if (fd_ < 0) return;
  // One write per line: O_APPEND places it whole at the end, and a job killed after it returns
  // leaves the line complete. A short write (a full disk) is reported once and stops recording.
  const ssize_t n = ::write(fd_, line.data(), line.size());
  if (n == static_cast<ssize_t>(line.size())) return;
  std::fprintf(stderr, "kareus: could not append to the record %s (%s); recording stops\n",
               path_.c_str(), n < 0 ? std::strerror(errno) : "short write");
  ::close(fd_);
  fd_ = -1;
}

void RunRecorder::close_span_locked(const Reading& now, bool ended) {
  if (!open_) return;
  const ScheduleInstruction& in = stage_.instructions[open_->index];
  measurement::InstructionSpan span;
  span.iteration = iteration_;
  span.index = open_->index;
  span.microbatch = in.microbatch;
  span.direction = in.direction;
  span.clock = in.clock;
  span.observed_clock = options_.nvml->sm_clock(options_.gpu);
  span.start = Seconds(open_->at.time - origin_.time);
  span.time = Seconds(now.time - open_->at.time);
  span.energy = Joules(now.energy - open_->at.energy);
  span.ended = ended;
  span.predicted_time = in.predicted_time;
  span.predicted_energy = in.predicted_energy;
  open_.reset();
  write_locked(measurement::to_line(span));
}

template <class F>
void RunRecorder::guarded(F&& record) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) return;
  // Recording must never stop the training it watches: an NVML read that fails ends the record
  // (its lines so far stay valid) with one message.
  try {
    record();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kareus: recording to %s stops: %s\n", path_.c_str(), e.what());
    ::close(fd_);
    fd_ = -1;
  }
}

void RunRecorder::instruction_begin(std::size_t index) {
  guarded([&] {
    const Reading now = read();
    close_span_locked(now, false);
    if (!iteration_start_) iteration_start_ = now;
    open_ = Open{index, now};
  });
}

void RunRecorder::instruction_end() {
  guarded([&] { close_span_locked(read(), true); });
}

void RunRecorder::iteration_end() {
  guarded([&] { iteration_end_locked(read()); });
}

void RunRecorder::iteration_end_locked(const Reading& now) {
  close_span_locked(now, false);
  if (iteration_start_) {
    measurement::IterationSpan span;
    span.iteration = iteration_;
    span.start = Seconds(iteration_start_->time - origin_.time);
    span.time = Seconds(now.time - iteration_start_->time);
    span.energy = Joules(now.energy - iteration_start_->energy);
    span.power_limit = options_.nvml->power_limit(options_.gpu);
    span.predicted_time = predicted_iteration_time_;
    span.predicted_energy_per_gpu = predicted_energy_per_gpu_;
    write_locked(measurement::to_line(span));
  }
  iteration_start_.reset();
  ++iteration_;
}

void RunRecorder::clock_applied(int iteration, std::size_t index, MHz clock, Seconds lead,
                                Seconds late) {
  guarded([&] {
    write_locked(
        measurement::to_line(measurement::ClockChange{iteration, index, clock, lead, late}));
  });
}

void RunRecorder::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fd_ < 0) return;
    // An instruction still open when the job stops is not a measurement of it.
    open_.reset();
    write_locked(measurement::end_line());
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  markers_done_.notify_all();
}

void RunRecorder::marker_queued() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++markers_;
}

void RunRecorder::marker_reached() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --markers_;
  }
  markers_done_.notify_all();
}

void RunRecorder::wait_for_markers() {
  std::unique_lock<std::mutex> lock(mutex_);
  markers_done_.wait(lock, [&] { return markers_ == 0 || fd_ < 0; });
}

}  // namespace kareus::runtime
