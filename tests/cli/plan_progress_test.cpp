// SPDX-License-Identifier: Apache-2.0
// `kareus plan`'s progress on stderr, written to a file as a terminal or a log would get it.
#include "plan_progress.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <thread>

namespace kareus::cli {
namespace {

using planner::Method;
using planner::PlanProgress;
using Phase = frontier::PipelineSolverProgress::Phase;

// What a PlanProgressLine wrote to its stream, once it is gone.
class Captured {
 public:
  Captured() : file_(std::tmpfile()) {}
  ~Captured() { std::fclose(file_); }
  std::FILE* file() const { return file_; }
  std::string text() const {
    std::fflush(file_);
    std::rewind(file_);
    std::string out;
    for (int c; (c = std::fgetc(file_)) != EOF;) out.push_back(static_cast<char>(c));
    return out;
  }

 private:
  std::FILE* file_;
};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

PlanProgress searching(Method m, std::size_t done, std::size_t of) {
  PlanProgress p{m};
  p.partitions_done = done;
  p.partitions = of;
  p.measurements = 10 * done;
  return p;
}

PlanProgress finished(Method m) {
  PlanProgress p{m};
  p.finished = true;
  p.frontier_points = 7;
  return p;
}

TEST(PlanProgress, SolverLineCountsStepsOfAKnownTotalWithAnEta) {
  MethodProgress m{searching(Method::kKareus, 4, 4), std::nullopt, 30.0, 0.0};
  EXPECT_EQ(running_line(m), "kareus: options for the pipeline frontier, 30.0 s");
  m.solver = frontier::PipelineSolverProgress{Phase::kSteps, 250, 1000};
  m.solver_elapsed_s = 10.0;
  // A quarter in 10 s: three quarters left take about 30 s.
  EXPECT_EQ(running_line(m),
            "kareus: 4 partitions searched; pipeline frontier, 250 of 1000 steps, ETA ~30.0 s, "
            "30.0 s");
  m.solver = frontier::PipelineSolverProgress{Phase::kSteps, 1, 1000};
  EXPECT_EQ(running_line(m).find("ETA"), std::string::npos) << "too little done to estimate";
  m.solver = frontier::PipelineSolverProgress{Phase::kPolish, 1000, 1000};
  EXPECT_NE(running_line(m).find("1000 steps, polishing"), std::string::npos) << running_line(m);
}

// A log gets each running method's line once it has run an interval without one, so a long plan
// says where it is; then the method's summary.
TEST(PlanProgress, LogGetsALinePerMethodEachIntervalThenItsSummary) {
  Captured out;
  {
    PlanProgressLine progress(out.file(),
                              {.interval = std::chrono::milliseconds(20), .terminal = false});
    progress(searching(Method::kPerseus, 0, 0));
    progress(searching(Method::kKareus, 1, 4));
    progress.solver(Method::kPerseus, {Phase::kSteps, 5, 10});
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    progress(finished(Method::kPerseus));
    progress(finished(Method::kKareus));
  }
  const std::string text = out.text();
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << "no terminal escapes in a log";
  EXPECT_EQ(text.find('\r'), std::string::npos);
  const auto all = lines(text);
  ASSERT_GE(all.size(), 4u) << text;
  EXPECT_NE(text.find("perseus: pipeline frontier, 5 of 10 steps"), std::string::npos) << text;
  EXPECT_NE(text.find("kareus: partition 2/4, 10 measurements"), std::string::npos) << text;
  EXPECT_EQ(all[all.size() - 2].rfind("perseus: done in ", 0), 0u) << text;
  EXPECT_EQ(all.back().rfind("kareus: done in ", 0), 0u) << text;
}

// A short plan logs its summaries only: no count that looks cut short.
TEST(PlanProgress, ShortPlanLogsOnlyItsSummaries) {
  Captured out;
  {
    PlanProgressLine progress(out.file(), {.terminal = false});
    progress(searching(Method::kKareus, 1, 4));
    progress(finished(Method::kKareus));
  }
  const auto all = lines(out.text());
  ASSERT_EQ(all.size(), 1u) << out.text();
  EXPECT_EQ(all[0].rfind("kareus: done in ", 0), 0u);
}

// The screen a terminal shows after the stream: cursor up, clear below, and a carriage return
// (always followed here by a whole line and a clear to its end) replayed over rows of text.
std::vector<std::string> screen(const std::string& text) {
  std::vector<std::string> rows{""};
  std::size_t row = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\x1b') {
      std::size_t j = i + 2;  // after "\x1b["
      std::size_t n = 0;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])))
        n = 10 * n + static_cast<std::size_t>(text[j++] - '0');
      if (text[j] == 'A') row -= std::min(row, n);
      if (text[j] == 'J') rows.resize(row + 1), rows[row].clear();
      i = j;
    } else if (c == '\r') {
      rows[row].clear();
    } else if (c == '\n') {
      if (++row == rows.size()) rows.emplace_back();
    } else {
      rows[row].push_back(c);
    }
  }
  while (!rows.empty() && rows.back().empty()) rows.pop_back();
  return rows;
}

// On a terminal each running method keeps its own line, below the summaries of those done.
TEST(PlanProgress, TerminalGivesEachRunningMethodItsLine) {
  Captured out;
  std::vector<std::string> middle;
  {
    PlanProgressLine progress(out.file(), {.workload = "w1", .terminal = true});
    progress(searching(Method::kMegatron, 0, 0));
    progress(finished(Method::kMegatron));
    progress(searching(Method::kPerseus, 0, 0));
    progress.solver(Method::kPerseus, {Phase::kSteps, 3, 10});
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    progress(searching(Method::kKareus, 2, 4));
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    progress.solver(Method::kPerseus, {Phase::kSteps, 6, 10});
    middle = screen(out.text());
    progress(finished(Method::kPerseus));
    progress(finished(Method::kKareus));
  }
  ASSERT_EQ(middle.size(), 3u) << out.text();
  EXPECT_EQ(middle[0].rfind("w1: megatron: done in ", 0), 0u) << middle[0];
  EXPECT_EQ(middle[1].rfind("w1: perseus: pipeline frontier, 6 of 10 steps", 0), 0u) << middle[1];
  EXPECT_EQ(middle[2].rfind("w1: kareus: partition 3/4, 20 measurements", 0), 0u) << middle[2];
  const auto end = screen(out.text());
  ASSERT_EQ(end.size(), 3u) << out.text();
  EXPECT_EQ(end[1].rfind("w1: perseus: done in ", 0), 0u) << end[1];
  EXPECT_EQ(end[2].rfind("w1: kareus: done in ", 0), 0u) << end[2];
}

}  // namespace
}  // namespace kareus::cli
