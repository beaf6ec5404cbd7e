// SPDX-License-Identifier: Apache-2.0
// "Least energy within deadline T" over a pipeline DAG's discrete options, as a mixed-integer
// program: x[v][i] = 1 when instruction v runs option i (one per instruction), s[v] its start,
// M the iteration time; s[w] >= s[v] + sum_i t_i x[v][i] (+ the transfer between stages) along
// every edge, s[v] + duration <= M <= T, minimising sum (e_i - P t_i) x[v][i] + P * stages * M,
// which is the iteration energy exactly. Solved to optimality by COIN-OR CBC, or as its LP
// relaxation by CLP, which convexifies every instruction's options (the time-cost trade-off LP that
// the min-cut steps also solve).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/frontier/pipeline_solver.hpp"

namespace kareus::frontier {

// What CBC found within its time limit. No plan within the deadline uses less than `lower_bound`,
// so a plan's excess over it bounds its excess over the optimum from above.
struct DeadlineOptimum {
  std::vector<int> assignment;  // the best plan found, per node an index into its option set
  Joules lower_bound;
  bool proven = false;              // `assignment` is optimal (to CBC's default gap tolerances)
  bool time_limit_reached = false;  // CBC stopped at its time limit (not at a node limit)
};

class DeadlineModel {
 public:
  // Columns only for the options that can be optimal: within each option set, those that no
  // other option beats in both time and time-effective energy; with `convexify`, only the lower
  // convex hull of those (all the LP relaxation ever uses, and fewer columns).
  DeadlineModel(const PipelineProblem& problem, bool convexify);
  ~DeadlineModel();
  DeadlineModel(const DeadlineModel&) = delete;
  DeadlineModel& operator=(const DeadlineModel&) = delete;

  void set_deadline(Seconds deadline);
  // LP relaxation, warm-started from the previous solve: per node, its (convexified) duration in
  // seconds; nullopt when no plan meets the deadline.
  std::optional<std::vector<double>> relaxed_durations();
  // The last relaxed_durations' optimum, the convexified iteration energy in joules.
  double relaxed_objective() const;
  // Branch and cut for `time_limit` seconds; nullopt when no plan meets the deadline or CBC finds
  // none in time. With a `start` (a plan within the deadline, per node an index into its option
  // set), CBC begins from it as its incumbent, with its energy as the cutoff, so that its time goes
  // to proving (raising the bound) rather than to finding a plan: the plan returned is then never
  // worse than the start (with `convexify`, than the start with each option off its hull run as
  // the cheapest hull option no slower). `settings` are further CBC command-line options ("-cuts",
  // "on", ...), given before the solve, for strengthening the bound. Throws Error (invalid input)
  // when `start` does not fit the problem or misses the deadline. Thread-safe: CBC's driver runs
  // one solve at a time (calls wait their turn), and the SIGINT handler is as it was on return.
  std::optional<DeadlineOptimum> optimum(double time_limit, std::span<const int> start = {},
                                         std::span<const std::string> settings = {});

 private:
  // Per node, the x column `start` runs (see optimum).
  std::vector<int> start_columns(std::span<const int> start) const;

  struct Lp;
  std::unique_ptr<Lp> lp_;
  std::vector<int> option_of_column_;  // x columns: the option index in its node's set
  std::vector<int> column_begin_;      // node v's x columns: [column_begin_[v], column_begin_[v+1])
  std::vector<double> column_time_;
  std::vector<double> outside_;      // per node: the longest path through it, its own time excluded
  std::vector<double> column_cost_;  // x columns: time-effective energy e - P t
  std::vector<int> option_set_of_;   // per node, as in the problem
  std::vector<std::vector<double>> option_time_;  // per option set, per option: its time
  int makespan_column_ = 0;
};

}  // namespace kareus::frontier
