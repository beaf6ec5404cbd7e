// SPDX-License-Identifier: Apache-2.0
#include "plan_progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "kareus/core/readable.hpp"

namespace kareus::cli {

std::string running_line(const planner::PlanProgress& p, double elapsed_s) {
  const std::string method = planner::to_string(p.method);
  if (p.partitions == 0)
    return fmt::format("{}: options and pipeline frontier, {}", method,
                       readable_duration(elapsed_s));
  if (p.partitions_done == p.partitions)
    return fmt::format("{}: {} partitions searched; pipeline frontier, {}", method, p.partitions,
                       readable_duration(elapsed_s));
  const double done = (static_cast<double>(p.partitions_done) + p.current_fraction) /
                      static_cast<double>(p.partitions);
  std::string line =
      fmt::format("{}: partition {}/{}, {} measurements", method,
                  std::min(p.partitions_done + 1, p.partitions), p.partitions, p.measurements);
  if (elapsed_s > 0) line += fmt::format(" ({:.0f}/s)", p.measurements / elapsed_s);
  // A search may stop before its cap, so the ETA is an upper estimate.
  if (done > 0.02)
    line += fmt::format(", ETA <= {}", readable_duration(elapsed_s * (1 - done) / done));
  return line;
}

std::string finished_line(const planner::PlanProgress& p, double elapsed_s) {
  std::string line = fmt::format("{}: done in {}, {} frontier point{}",
                                 planner::to_string(p.method), readable_duration(elapsed_s),
                                 p.frontier_points, p.frontier_points == 1 ? "" : "s");
  if (p.measurements > 0) {
    line += fmt::format(", {} partition measurements", p.measurements);
    if (p.measurements_reused == p.measurements)
      line += " (all reused from the store)";
    else if (p.measurements_reused > 0)
      line += fmt::format(" ({} reused from the store)", p.measurements_reused);
  }
  return line;
}

// The summary of frontier::solve_pipeline, as pipeline-solve prints it, named by its method.
std::string solver_line(const planner::PlanProgress& p) {
  return fmt::format("{}: {}", planner::to_string(p.method), p.solver.to_string());
}

PlanProgressLine::PlanProgressLine(std::FILE* out, bool verbose)
    : out_(out),
      tty_(isatty(fileno(out)) != 0),
      verbose_(verbose),
      refine_lines_(out),
      ticker_([this] { tick(); }) {}

PlanProgressLine::~PlanProgressLine() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  ticker_.join();
}

void PlanProgressLine::operator()(const planner::PlanProgress& p) {
  const std::lock_guard lock(mutex_);
  const auto now = Clock::now();
  const auto start = method_start_.try_emplace(p.method, now).first->second;
  const double elapsed = std::chrono::duration<double>(now - start).count();
  if (p.finished) {
    // The summary replaces the redrawn line and stays: it is never a count that stopped short.
    std::string text = (tty_ ? "\r" : "") + finished_line(p, elapsed) + (tty_ ? "\x1b[K\n" : "\n");
    if (verbose_) text += solver_line(p) + "\n";
    std::fputs(text.c_str(), out_);
    std::fflush(out_);
    if (running_ && running_->method == p.method) running_.reset();
    return;
  }
  running_ = p;
  if (tty_ && now - last_draw_ >= std::chrono::milliseconds(100)) redraw_locked();
}

void PlanProgressLine::refine(planner::Method method, const frontier::RefineProgress& p) {
  const std::lock_guard lock(mutex_);
  refine_lines_(std::string(planner::to_string(method)) + ": ", p);
}

void PlanProgressLine::redraw_locked() {
  last_draw_ = Clock::now();
  const double elapsed =
      std::chrono::duration<double>(last_draw_ - method_start_.at(running_->method)).count();
  std::fputs(("\r" + running_line(*running_, elapsed) + "\x1b[K").c_str(), out_);
  std::fflush(out_);
}

// The pipeline solver reports nothing while it works, so a terminal's line keeps its clock moving.
void PlanProgressLine::tick() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::seconds(1));
    if (!stop_ && tty_ && running_) redraw_locked();
  }
  if (tty_ && running_) std::fputs("\r\x1b[K", out_);
}

}  // namespace kareus::cli
