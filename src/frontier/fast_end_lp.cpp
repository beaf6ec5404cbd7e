// SPDX-License-Identifier: Apache-2.0
#include "fast_end_lp.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>

#include "clp_lp.hpp"
#include "deadline_bounds.hpp"

namespace kareus::frontier {

namespace {

struct Arc {
  int head;
  double length;
};

// Longest paths from node 0 over arcs out[tail] (no positive cycle), given a potential with
// potential[head] - potential[tail] >= length on every arc up to rounding: Dijkstra over the
// slacks finds the path tree, and each node's length is then summed along it from the arcs'.
std::vector<double> longest_paths(const std::vector<std::vector<Arc>>& out,
                                  const std::vector<double>& potential) {
  const std::size_t nodes = out.size();
  std::vector<double> distance(nodes, std::numeric_limits<double>::infinity()), length(nodes, 0);
  std::vector<int> parent(nodes, -1), settled;
  std::vector<char> done(nodes, 0);
  using Entry = std::pair<double, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  distance[0] = 0;
  queue.emplace(0.0, 0);
  while (!queue.empty()) {
    const auto [d, tail] = queue.top();
    queue.pop();
    if (done[tail]) continue;
    done[tail] = 1;
    settled.push_back(tail);
    for (const Arc& arc : out[tail]) {
      const double slack = std::max(0.0, potential[arc.head] - potential[tail] - arc.length);
      if (d + slack < distance[arc.head]) {
        distance[arc.head] = d + slack;
        parent[arc.head] = tail;
        length[arc.head] = arc.length;
        queue.emplace(distance[arc.head], arc.head);
      }
    }
  }
  std::vector<double> times(nodes, 0.0);
  for (int k : settled)
    if (k != 0) times[k] = times[parent[k]] + length[k];
  return times;
}

}  // namespace

struct FastEndLp::Lp : ClpLp {};

FastEndLp::FastEndLp(const PipelineProblem& problem) : lp_(std::make_unique<Lp>()) {
  const auto& dag = problem.dag;
  const int n = static_cast<int>(dag.nodes.size());
  const double p = problem.p_blocking.value();
  // Each option set's hull once: per set, the fastest time and cost, then per segment its end and
  // slope.
  struct Hull {
    double fastest_time, fastest_cost;
    std::vector<double> ends, slopes;
  };
  std::vector<Hull> hulls;
  for (const auto& set : problem.option_sets) {
    const auto kept = candidate_options(set, problem.p_blocking, true);
    const auto time = [&](int i) { return set[i].time.value(); };
    const auto cost = [&](int i) { return set[i].energy.value() - p * time(i); };
    Hull hull{time(kept[0]), cost(kept[0]), {}, {}};
    for (std::size_t k = 1; k < kept.size(); ++k) {
      hull.ends.push_back(time(kept[k]));
      hull.slopes.push_back((cost(kept[k]) - cost(kept[k - 1])) /
                            (time(kept[k]) - time(kept[k - 1])));
    }
    hulls.push_back(std::move(hull));
  }

  std::vector<double> objective, lower, upper;
  segment_begin_.push_back(0);
  for (int v = 0; v < n; ++v) {
    const Hull& hull = hulls[problem.option_set_of[v]];
    fastest_.push_back(hull.fastest_time);
    fastest_cost_ += hull.fastest_cost;
    double begin = hull.fastest_time;
    for (std::size_t k = 0; k < hull.ends.size(); ++k) {
      segment_end_.push_back(hull.ends[k]);
      objective.push_back(hull.slopes[k]);
      lower.push_back(0.0);
      upper.push_back(hull.ends[k] - begin);
      begin = hull.ends[k];
    }
    segment_begin_.push_back(static_cast<int>(segment_end_.size()));
  }
  const int segments = segment_begin_.back();
  const auto start_column = [&](int v) { return segments + v; };
  const auto finish_column = [&](int v) { return segments + n + v; };
  makespan_column_ = segments + 2 * n;
  const double infinity = lp_->solver.getInfinity();
  for (int c = segments; c <= makespan_column_; ++c) {
    objective.push_back(c == makespan_column_ ? p * dag.stages : 0.0);
    lower.push_back(0.0);
    upper.push_back(infinity);
  }

  std::vector<int> rows, columns;
  std::vector<double> values, row_lower, row_upper;
  const auto entry = [&](int column, double value) {
    rows.push_back(static_cast<int>(row_lower.size()));
    columns.push_back(column);
    values.push_back(value);
  };
  const auto bounds = [&](double low, double high) {
    row_lower.push_back(low);
    row_upper.push_back(high);
  };
  for (int v = 0; v < n; ++v) {  // F[v] - S[v] - sum_k y[v][k] = fastest time
    entry(finish_column(v), 1.0);
    entry(start_column(v), -1.0);
    for (int c = segment_begin_[v]; c < segment_begin_[v + 1]; ++c) entry(c, -1.0);
    bounds(fastest_[v], fastest_[v]);
  }
  std::vector<char> has_successor(n, 0);
  for (const auto& [from, to] : dag.edges) {  // S[w] - F[v] >= delay
    entry(start_column(to), 1.0);
    entry(finish_column(from), -1.0);
    const double delay =
        dag.nodes[from].stage != dag.nodes[to].stage ? problem.transfer.value() : 0.0;
    bounds(delay, infinity);
    edges_.push_back({from, to, delay});
    has_successor[from] = 1;
  }
  for (int v = 0; v < n; ++v) {  // M - F[v] >= 0 at the leaves
    if (has_successor[v]) continue;
    leaves_.push_back(v);
    entry(makespan_column_, 1.0);
    entry(finish_column(v), -1.0);
    bounds(0.0, infinity);
  }
  outside_ = outside_paths(problem, fastest_);
  // Reduced costs and duals are in watts; CLP's own dual tolerance is 1e-7 on its scaled problem.
  double largest = 1;
  for (double c : objective) largest = std::max(largest, std::fabs(c));
  zero_dual_ = 1e-9 * largest;

  lp_->load(rows, columns, values, lower, upper, objective, row_lower, row_upper);
  // The earliest optimal times make the durations independent of CLP's vertex. The 70B plans at
  // 512 microbatches took 37,000-40,000 pivots (7-11 s) in the first solve by dual simplex, 35
  // iterations (2 s) by the interior point method; the resolves a third fewer pivots by Dantzig's
  // rule.
  lp_->any_optimal_vertex_will_do();
}

FastEndLp::~FastEndLp() = default;

void FastEndLp::set_deadline(Seconds deadline) {
  const double t = deadline.value();
  auto& solver = lp_->solver;
  solver.setColUpper(makespan_column_, t);
  fits_ = true;
  for (std::size_t v = 0; v < outside_.size(); ++v) {
    // DeadlineModel's tolerance: an option fits when its time is within room + 1e-9 t.
    const double room = t - outside_[v] + 1e-9 * t;
    fits_ = fits_ && fastest_[v] <= room;
    double begin = fastest_[v];
    for (int c = segment_begin_[v]; c < segment_begin_[v + 1]; ++c) {
      solver.setColUpper(c, segment_end_[c] <= room ? segment_end_[c] - begin : 0.0);
      begin = segment_end_[c];
    }
  }
}

std::optional<std::vector<double>> FastEndLp::relaxed_durations() {
  if (!fits_) return std::nullopt;
  if (!lp_->solve()) return std::nullopt;
  const int n = static_cast<int>(fastest_.size());
  std::vector<double> durations(fastest_);
  if (earliest_times_) {
    const auto times = earliest_times();
    for (int v = 0; v < n; ++v) durations[v] = times[n + v] - times[v];
    return durations;
  }
  const double* y = lp_->solver.getColSolution();
  for (int v = 0; v < n; ++v)
    for (int c = segment_begin_[v]; c < segment_begin_[v + 1]; ++c) durations[v] += y[c];
  return durations;
}

// Complementary slackness with the duals of one optimal solution makes the optimal solutions the
// feasible ones that keep every row and bound whose dual (reduced cost) is not zero tight. Over the
// times (node 0 the origin, then the start, finish and makespan columns) these are difference
// constraints x[head] - x[tail] >= length: each row and bound, the reverse of each kept tight, and
// per node a duration range in which its segments with a reduced cost sit at their bound and the
// others are free. Their least solution, the earliest optimal times (one point of the optimal
// face, whichever vertex CLP returned), is the longest path from the origin. CLP's solution is a
// feasible potential for them, and the times are summed from the arcs' lengths alone (hull vertex
// times, transfers, the deadline), so they do not carry the vertex's own values.
std::vector<double> FastEndLp::earliest_times() const {
  const auto& solver = lp_->solver;
  const double* x = solver.getColSolution();
  const double* reduced = solver.getReducedCost();
  const double* dual = solver.getRowPrice();
  const double* upper = solver.getColUpper();
  const int n = static_cast<int>(fastest_.size());
  const int segments = segment_begin_.back();
  const int nodes = 2 * n + 2;
  const int makespan = nodes - 1;
  const auto start = [](int v) { return 1 + v; };
  const auto finish = [n](int v) { return 1 + n + v; };
  const auto nonzero = [this](double value) { return std::fabs(value) > zero_dual_; };

  std::vector<std::vector<Arc>> out(nodes);
  const auto at_least = [&](int tail, int head, double length, bool tight) {
    out[tail].push_back({head, length});
    if (tight) out[head].push_back({tail, -length});
  };
  for (int k = 1; k < nodes; ++k) at_least(0, k, 0.0, reduced[segments + k - 1] > zero_dual_);
  at_least(makespan, 0, -upper[makespan_column_], reduced[makespan_column_] < -zero_dual_);
  for (int v = 0; v < n; ++v) {  // the range's ends: hull vertex times, data of the problem
    double shortest = fastest_[v], longest = fastest_[v];
    for (int c = segment_begin_[v]; c < segment_begin_[v + 1] && upper[c] > 0; ++c) {
      if (reduced[c] < -zero_dual_) shortest = segment_end_[c];
      if (reduced[c] <= zero_dual_) longest = segment_end_[c];
    }
    at_least(start(v), finish(v), shortest, false);
    at_least(finish(v), start(v), -std::max(shortest, longest), false);
  }
  for (std::size_t e = 0; e < edges_.size(); ++e)
    at_least(finish(edges_[e].from), start(edges_[e].to), edges_[e].delay, nonzero(dual[n + e]));
  for (std::size_t l = 0; l < leaves_.size(); ++l)
    at_least(finish(leaves_[l]), makespan, 0.0, nonzero(dual[n + edges_.size() + l]));

  std::vector<double> potential(nodes, 0.0);
  std::copy(x + segments, x + segments + nodes - 1, potential.begin() + 1);
  auto times = longest_paths(out, potential);
  times.erase(times.begin());
  return times;
}

OsiClpSolverInterface& FastEndLp::solver() {
  return lp_->solver;
}

double FastEndLp::objective() const {
  return fastest_cost_ + lp_->solver.getObjValue();
}

}  // namespace kareus::frontier
