// SPDX-License-Identifier: Apache-2.0
// How `kareus plan` shows its progress on stderr. On a terminal: one line per method, redrawn in
// place with its count, rate and ETA while it runs (and its elapsed time while the pipeline
// solver, which reports nothing, works), then left as that method's summary. Off a terminal: the
// summary lines only, so a log is not filled with counts. A --milp-nodes refinement's lines
// (refine_progress.hpp) stay above the redrawn line.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "kareus/planner/planner.hpp"
#include "refine_progress.hpp"

namespace kareus::cli {

class PlanProgressLine {
 public:
  // `verbose`: each method's summary line is followed by its pipeline solver's (solver_line).
  PlanProgressLine(std::FILE* out, bool verbose);
  ~PlanProgressLine();
  PlanProgressLine(const PlanProgressLine&) = delete;
  PlanProgressLine& operator=(const PlanProgressLine&) = delete;

  void operator()(const planner::PlanProgress& p);
  // A method's --milp-nodes refinement (RefineProgressLines), between this line's redraws.
  void refine(planner::Method method, const frontier::RefineProgress& p);

 private:
  using Clock = std::chrono::steady_clock;
  void redraw_locked();
  void tick();

  std::FILE* out_;
  bool tty_;
  bool verbose_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::optional<planner::PlanProgress> running_;  // the method on the line now
  // When each method was first reported: the plan solves one method while the next one starts.
  std::map<planner::Method, Clock::time_point> method_start_;
  Clock::time_point last_draw_;
  RefineProgressLines refine_lines_;
  std::thread ticker_;  // last: started once the members it reads exist
};

// The text of a progress line; exposed for the tests. `elapsed_s` is the method's time so far.
std::string running_line(const planner::PlanProgress& p, double elapsed_s);
std::string finished_line(const planner::PlanProgress& p, double elapsed_s);
std::string solver_line(const planner::PlanProgress& p);

}  // namespace kareus::cli
