// SPDX-License-Identifier: Apache-2.0
// How `kareus plan` shows its progress on stderr. Methods are searched one after another but
// their pipeline solves run side by side, so each running method has a line of its own: its
// partition count, rate and ETA while it searches, then its pipeline solver's steps out of their
// known count with an ETA. On a terminal those lines are redrawn in place as a block; off a
// terminal (a log, a pipe) a method's line is written when it has run `interval` without one, so
// a long plan says where it is and a short one writes nothing but its summaries. Each method ends
// with its summary line, which stays. A --milp-nodes refinement's lines (refine_progress.hpp) stay
// above the block. In a sweep every line starts with the workload's name.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kareus/frontier/pipeline_solver.hpp"
#include "kareus/planner/planner.hpp"
#include "refine_progress.hpp"

namespace kareus::cli {

struct PlanProgressOptions {
  bool verbose = false;  // each summary line is followed by its pipeline solver's (solver_line)
  std::string workload{};  // in a sweep: the name that starts each line; empty: none
  // Off a terminal: how long a method runs before its line is written again.
  std::chrono::milliseconds interval{10000};
  // Whether the stream is a terminal; unset: isatty.
  std::optional<bool> terminal = std::nullopt;
};

// A running method as its line shows it.
struct MethodProgress {
  planner::PlanProgress plan;
  std::optional<frontier::PipelineSolverProgress> solver;  // once its pipeline solve started
  double elapsed_s = 0;                                    // since the method started
  double solver_elapsed_s = 0;                             // since its pipeline solve started
};

class PlanProgressLine {
 public:
  PlanProgressLine(std::FILE* out, PlanProgressOptions options);
  ~PlanProgressLine();
  PlanProgressLine(const PlanProgressLine&) = delete;
  PlanProgressLine& operator=(const PlanProgressLine&) = delete;

  void operator()(const planner::PlanProgress& p);
  // A method's pipeline solver, from the thread that solves it.
  void solver(planner::Method method, const frontier::PipelineSolverProgress& p);
  // A method's --milp-nodes refinement (RefineProgressLines), above the block.
  void refine(planner::Method method, const frontier::RefineProgress& p);

 private:
  using Clock = std::chrono::steady_clock;
  struct Running {
    planner::PlanProgress plan;
    std::optional<frontier::PipelineSolverProgress> solver;
    Clock::time_point start;
    Clock::time_point solver_start;
    Clock::time_point last_logged;  // off a terminal: its last line, or its start
  };
  Running& running_locked(planner::Method method, Clock::time_point now);
  std::string line_locked(const Running& r, Clock::time_point now) const;
  void write_lines_locked(const std::string& lines);
  void redraw_locked();
  void log_due_locked();
  void tick();

  std::FILE* out_;
  PlanProgressOptions options_;
  bool tty_;
  std::string prefix_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::vector<Running> running_;  // in the order the methods started
  std::size_t drawn_ = 0;         // lines of the block on the terminal now, above the cursor
  Clock::time_point last_draw_;
  RefineProgressLines refine_lines_;
  std::thread ticker_;  // last: started once the members it reads exist
};

// The text of a progress line; exposed for the tests.
std::string running_line(const MethodProgress& m);
std::string finished_line(const planner::PlanProgress& p, double elapsed_s);
std::string solver_line(const planner::PlanProgress& p);

}  // namespace kareus::cli
