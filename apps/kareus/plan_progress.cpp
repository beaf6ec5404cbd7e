// SPDX-License-Identifier: Apache-2.0
#include "plan_progress.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>

#include "kareus/core/readable.hpp"

namespace kareus::cli {
namespace {

// An estimate from the share done so far, once there is enough of it to mean something.
std::string eta(double fraction, double elapsed_s) {
  if (fraction <= 0.02 || fraction >= 1) return "";
  return fmt::format(", ETA ~{}", readable_duration(elapsed_s * (1 - fraction) / fraction));
}

std::string solver_text(const frontier::PipelineSolverProgress& s, double elapsed_s) {
  using Phase = frontier::PipelineSolverProgress::Phase;
  switch (s.phase) {
    case Phase::kSteps:
      return fmt::format("pipeline frontier, {} of {} steps{}", s.units_shortened,
                         s.units_to_shorten, eta(s.steps_fraction(), elapsed_s));
    case Phase::kFastEnd:
      return fmt::format("pipeline frontier, {} steps, fast end", s.units_to_shorten);
    case Phase::kPolish:
      return fmt::format("pipeline frontier, {} steps, polishing", s.units_to_shorten);
  }
  return "";
}

// Columns of the terminal, for lines that must not wrap (a wrapped line breaks the redraw).
std::size_t terminal_columns(std::FILE* out) {
  winsize size{};
  if (ioctl(fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 120;
}

}  // namespace

std::string running_line(const MethodProgress& m) {
  const auto& p = m.plan;
  std::string line = std::string(planner::to_string(p.method)) + ": ";
  if (m.solver) {
    if (p.partitions > 0) line += fmt::format("{} partitions searched; ", p.partitions);
    return line + solver_text(*m.solver, m.solver_elapsed_s) + ", " +
           readable_duration(m.elapsed_s);
  }
  if (p.partitions == 0 || p.partitions_done == p.partitions)
    return line + "options for the pipeline frontier, " + readable_duration(m.elapsed_s);
  const double done = (static_cast<double>(p.partitions_done) + p.current_fraction) /
                      static_cast<double>(p.partitions);
  line += fmt::format("partition {}/{}, {} measurements",
                      std::min(p.partitions_done + 1, p.partitions), p.partitions, p.measurements);
  // A rate over less than a second says more about the clock than the search.
  if (m.elapsed_s >= 1) line += fmt::format(" ({:.0f}/s)", p.measurements / m.elapsed_s);
  // A search may stop before its cap, so the ETA is an upper estimate.
  if (done > 0.02)
    line += fmt::format(", ETA <= {}", readable_duration(m.elapsed_s * (1 - done) / done));
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

PlanProgressLine::PlanProgressLine(std::FILE* out, PlanProgressOptions options)
    : out_(out),
      options_(std::move(options)),
      tty_(options_.terminal.value_or(isatty(fileno(out)) != 0)),
      prefix_(options_.workload.empty() ? "" : options_.workload + ": "),
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
  Running& r = running_locked(p.method, now);
  if (p.finished) {
    const double elapsed = std::chrono::duration<double>(now - r.start).count();
    std::string text = prefix_ + finished_line(p, elapsed) + "\n";
    if (options_.verbose) text += prefix_ + solver_line(p) + "\n";
    running_.erase(running_.begin() + (&r - running_.data()));
    // The summary stays: it is never a count that stopped short.
    write_lines_locked(text);
    return;
  }
  r.plan = p;
  if (tty_ && now - last_draw_ >= std::chrono::milliseconds(100)) redraw_locked();
}

void PlanProgressLine::solver(planner::Method method, const frontier::PipelineSolverProgress& p) {
  const std::lock_guard lock(mutex_);
  const auto now = Clock::now();
  Running& r = running_locked(method, now);
  if (!r.solver) r.solver_start = now;
  r.solver = p;
  if (tty_ && now - last_draw_ >= std::chrono::milliseconds(100)) redraw_locked();
}

void PlanProgressLine::refine(planner::Method method, const frontier::RefineProgress& p) {
  const std::string line =
      refine_lines_.due_line(std::string(planner::to_string(method)) + ": ", p);
  if (line.empty()) return;
  const std::lock_guard lock(mutex_);
  write_lines_locked(prefix_ + line + "\n");
}

PlanProgressLine::Running& PlanProgressLine::running_locked(planner::Method method,
                                                            Clock::time_point now) {
  const auto it = std::find_if(running_.begin(), running_.end(),
                               [&](const Running& r) { return r.plan.method == method; });
  if (it != running_.end()) return *it;
  return running_.emplace_back(Running{planner::PlanProgress{method}, std::nullopt, now, now, now});
}

std::string PlanProgressLine::line_locked(const Running& r, Clock::time_point now) const {
  const auto seconds = [&](Clock::time_point since) {
    return std::chrono::duration<double>(now - since).count();
  };
  return prefix_ + running_line(MethodProgress{r.plan, r.solver, seconds(r.start),
                                               r.solver ? seconds(r.solver_start) : 0.0});
}

// Lines that stay: on a terminal, written over the block, which is then drawn again below them.
void PlanProgressLine::write_lines_locked(const std::string& lines) {
  if (!tty_) {
    std::fputs(lines.c_str(), out_);
    std::fflush(out_);
    return;
  }
  if (drawn_ > 0) std::fputs(fmt::format("\x1b[{}A", drawn_).c_str(), out_);
  std::fputs(("\r\x1b[J" + lines).c_str(), out_);
  drawn_ = 0;
  redraw_locked();
}

// The block: a line per running method, the cursor left below it.
void PlanProgressLine::redraw_locked() {
  last_draw_ = Clock::now();
  const std::size_t columns = terminal_columns(out_);
  std::string text = drawn_ > 0 ? fmt::format("\x1b[{}A", drawn_) : "";
  for (const Running& r : running_) {
    std::string line = line_locked(r, last_draw_);
    if (line.size() >= columns) line.resize(columns - 1);
    text += "\r" + line + "\x1b[K\n";
  }
  text += "\x1b[J";
  drawn_ = running_.size();
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
}

// Off a terminal: the line of each method that has run an interval without one.
void PlanProgressLine::log_due_locked() {
  const auto now = Clock::now();
  std::string text;
  for (Running& r : running_) {
    if (now - r.last_logged < options_.interval) continue;
    r.last_logged = now;
    text += line_locked(r, now) + "\n";
  }
  if (text.empty()) return;
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
}

// Keeps the lines moving while nothing reports (a long partition search, the pipeline solver
// between reports): once a second on a terminal; off one, each method's line when it is due.
void PlanProgressLine::tick() {
  std::unique_lock lock(mutex_);
  const auto period = tty_ ? std::chrono::milliseconds(1000)
                           : std::clamp(options_.interval / 4, std::chrono::milliseconds(1),
                                        std::chrono::milliseconds(1000));
  while (!stop_) {
    wake_.wait_for(lock, period);
    if (stop_) break;
    if (tty_ && !running_.empty()) redraw_locked();
    if (!tty_) log_due_locked();
  }
  if (tty_ && drawn_ > 0) std::fputs(fmt::format("\x1b[{}A\r\x1b[J", drawn_).c_str(), out_);
}

}  // namespace kareus::cli
