// SPDX-License-Identifier: Apache-2.0
// How `kareus plan` and `kareus pipeline-solve` show a --milp-nodes refinement on stderr: the
// whole-problem MILP's result and each window sweep's as lines that stay, and within a sweep a
// line at most every few seconds, so a refinement of a minute says where it is without filling a
// log. What is refined, and when it stops, does not depend on it.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "kareus/frontier/deadline_refine.hpp"

namespace kareus::cli {

class RefineProgressLines {
 public:
  explicit RefineProgressLines(std::FILE* out, std::chrono::milliseconds interval = kInterval);

  // Prints `prefix` and frontier::refine_progress_line(p) when due; each prefix (a method's name
  // in `kareus plan`) has its own interval. Safe to call from several threads.
  void operator()(const std::string& prefix, const frontier::RefineProgress& p);
  // The line operator() would print, without a newline, or "" when none is due (and then it
  // counts as printed). For a caller that writes its own lines around it.
  std::string due_line(const std::string& prefix, const frontier::RefineProgress& p);

  static constexpr std::chrono::milliseconds kInterval{5000};

 private:
  using Clock = std::chrono::steady_clock;
  std::FILE* out_;
  bool tty_;
  std::chrono::milliseconds interval_;
  std::mutex mutex_;
  std::map<std::string, Clock::time_point> last_line_;
};

}  // namespace kareus::cli
