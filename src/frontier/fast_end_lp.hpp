// SPDX-License-Identifier: Apache-2.0
// The LP relaxation of "least energy within deadline T" that the pipeline solver's fast end
// rounds, in a smaller form than DeadlineModel's multiple-choice one (same optimum).
//
// With convexified options, an instruction's cost is a convex piecewise-linear function of its
// duration: the lower convex hull of (time, e - P t) over its options. So per instruction v:
// segment columns y[v][k] in [0, length of hull segment k], duration d[v] = fastest time +
// sum_k y[v][k] (slopes increase along the hull, so a cheaper optimum always fills the segments in
// order and no ordering constraint is needed), a start column S[v] and a finish column F[v] with
// F[v] - S[v] - sum_k y[v][k] = fastest time; each DAG edge is the two-entry row
// S[w] - F[v] >= delay, each leaf M - F[v] >= 0, M <= T. Objective: sum of the segment slopes
// times y plus P * stages * M (plus the constant of every instruction at its fastest option).
// DeadlineModel carries one entry per option of the earlier instruction on every edge row and a
// convexity row per instruction; this has about half the nonzeros and no convexity rows.
#pragma once

#include <OsiClpSolverInterface.hpp>

#include <memory>
#include <optional>
#include <vector>

#include "kareus/core/units.hpp"
#include "kareus/frontier/pipeline_solver.hpp"

namespace kareus::frontier {

class FastEndLp {
 public:
  explicit FastEndLp(const PipelineProblem& problem);
  ~FastEndLp();
  FastEndLp(const FastEndLp&) = delete;
  FastEndLp& operator=(const FastEndLp&) = delete;

  // As DeadlineModel::set_deadline: the makespan bound, and every instruction limited to the hull
  // vertices that fit in what the rest of the DAG at its fastest leaves of the deadline.
  void set_deadline(Seconds deadline);
  // Solved (warm-started from the previous solve): per node, its duration in seconds at the
  // earliest optimal times (below); nullopt when no plan meets the deadline.
  std::optional<std::vector<double>> relaxed_durations();
  // The last solve's optimum, the convexified iteration energy in joules.
  double objective() const;

  // The LP is very degenerate: many optimal vertices, and which one CLP's pivots end at (its
  // settings, the previous basis) would set the durations. On by default; off (the durations of
  // CLP's vertex) only for the test that shows this.
  void set_earliest_times(bool on) { earliest_times_ = on; }
  // The CLP solver, for tests that solve with other settings.
  OsiClpSolverInterface& solver();

 private:
  // The earliest optimal times of the last solve, per time column (starts, finishes, makespan).
  std::vector<double> earliest_times() const;

  struct Lp;
  std::unique_ptr<Lp> lp_;
  std::vector<int> segment_begin_;   // node v's segment columns: [begin[v], begin[v + 1])
  std::vector<double> segment_end_;  // per segment column, the duration at its end
  std::vector<double> fastest_;      // per node, its fastest option's time
  std::vector<double> outside_;      // per node, the longest path through it, its time excluded
  double fastest_cost_ = 0;          // sum over nodes of the fastest option's e - P t
  struct Edge {
    int from, to;
    double delay;
  };
  std::vector<Edge> edges_;  // the edge rows, in order after the n node rows
  std::vector<int> leaves_;  // the leaf rows, in order after the edge rows
  int makespan_column_ = 0;
  bool fits_ = true;  // every node has an option within the deadline
  bool earliest_times_ = true;
  double zero_dual_ = 0;  // a reduced cost or dual no larger in magnitude counts as zero
};

}  // namespace kareus::frontier
