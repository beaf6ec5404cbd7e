#include "fast_end_lp.hpp"

#include "clp_lp.hpp"
#include "deadline_bounds.hpp"

namespace kareus::frontier {

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
    bounds(dag.nodes[from].stage != dag.nodes[to].stage ? problem.transfer.value() : 0.0, infinity);
    has_successor[from] = 1;
  }
  for (int v = 0; v < n; ++v) {  // M - F[v] >= 0 at the leaves
    if (has_successor[v]) continue;
    entry(makespan_column_, 1.0);
    entry(finish_column(v), -1.0);
    bounds(0.0, infinity);
  }
  outside_ = outside_paths(problem, fastest_);

  lp_->load(rows, columns, values, lower, upper, objective, row_lower, row_upper);
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
  const double* y = lp_->solver.getColSolution();
  std::vector<double> durations(fastest_);
  for (std::size_t v = 0; v < durations.size(); ++v)
    for (int c = segment_begin_[v]; c < segment_begin_[v + 1]; ++c) durations[v] += y[c];
  return durations;
}

double FastEndLp::objective() const {
  return fastest_cost_ + lp_->solver.getObjValue();
}

}  // namespace kareus::frontier
