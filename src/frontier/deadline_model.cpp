#include "kareus/frontier/deadline_model.hpp"

#include <fmt/format.h>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <OsiClpSolverInterface.hpp>

#include <algorithm>
#include <numeric>
#include <string>

#include "clp_lp.hpp"
#include "deadline_bounds.hpp"

namespace kareus::frontier {

struct DeadlineModel::Lp : ClpLp {};

DeadlineModel::DeadlineModel(const PipelineProblem& problem, bool convexify)
    : lp_(std::make_unique<Lp>()) {
  const auto& dag = problem.dag;
  const int n = static_cast<int>(dag.nodes.size());
  std::vector<std::vector<int>> candidates;
  for (const auto& set : problem.option_sets)
    candidates.push_back(candidate_options(set, problem.p_blocking, convexify));
  std::vector<double> objective, lower, upper;
  column_begin_.push_back(0);
  for (int v = 0; v < n; ++v) {
    const int s = problem.option_set_of[v];
    for (int i : candidates[s]) {
      const auto& o = problem.option_sets[s][i];
      option_of_column_.push_back(i);
      column_time_.push_back(o.time.value());
      objective.push_back((o.energy - problem.p_blocking * o.time).value());
      lower.push_back(0.0);
      upper.push_back(1.0);
    }
    column_begin_.push_back(static_cast<int>(option_of_column_.size()));
  }
  const int x_columns = column_begin_.back();
  const auto start_column = [&](int v) { return x_columns + v; };
  makespan_column_ = x_columns + n;
  for (int v = 0; v <= n; ++v) {
    objective.push_back(v < n ? 0.0 : problem.p_blocking.value() * dag.stages);
    lower.push_back(0.0);
    upper.push_back(lp_->solver.getInfinity());
  }

  std::vector<int> rows, columns, index;
  std::vector<double> values, value, row_lower, row_upper;
  const auto add_row = [&] {
    const int row = static_cast<int>(row_lower.size());
    rows.insert(rows.end(), index.size(), row);
    columns.insert(columns.end(), index.begin(), index.end());
    values.insert(values.end(), value.begin(), value.end());
  };
  // later - earlier - duration(earlier) >= delay, `later` being a successor's start or the
  // makespan.
  const auto precede = [&](int earlier, int later_column, double delay) {
    index.assign({later_column, start_column(earlier)});
    value.assign({1.0, -1.0});
    for (int c = column_begin_[earlier]; c < column_begin_[earlier + 1]; ++c) {
      index.push_back(c);
      value.push_back(-column_time_[c]);
    }
    add_row();
    row_lower.push_back(delay);
    row_upper.push_back(lp_->solver.getInfinity());
  };
  std::vector<char> has_successor(n, 0);
  for (const auto& [from, to] : dag.edges) {
    precede(from, start_column(to),
            dag.nodes[from].stage != dag.nodes[to].stage ? problem.transfer.value() : 0.0);
    has_successor[from] = 1;
  }
  for (int v = 0; v < n; ++v) {
    if (!has_successor[v]) precede(v, makespan_column_, 0.0);
    index.resize(column_begin_[v + 1] - column_begin_[v]);
    std::iota(index.begin(), index.end(), column_begin_[v]);
    value.assign(index.size(), 1.0);
    add_row();
    row_lower.push_back(1.0);
    row_upper.push_back(1.0);
  }
  std::vector<double> fastest(n);
  for (int v = 0; v < n; ++v)
    fastest[v] = *std::min_element(column_time_.begin() + column_begin_[v],
                                   column_time_.begin() + column_begin_[v + 1]);
  outside_ = outside_paths(problem, fastest);

  lp_->load(rows, columns, values, lower, upper, objective, row_lower, row_upper);
}

DeadlineModel::~DeadlineModel() = default;

void DeadlineModel::set_deadline(Seconds deadline) {
  const double t = deadline.value();
  lp_->solver.setColUpper(makespan_column_, t);
  for (std::size_t v = 0; v < outside_.size(); ++v) {
    const double room = t - outside_[v];
    for (int c = column_begin_[v]; c < column_begin_[v + 1]; ++c)
      lp_->solver.setColUpper(c, column_time_[c] <= room + 1e-9 * t ? 1.0 : 0.0);
  }
}

std::optional<std::vector<double>> DeadlineModel::relaxed_durations() {
  if (!lp_->solve()) return std::nullopt;
  const double* x = lp_->solver.getColSolution();
  std::vector<double> durations(column_begin_.size() - 1, 0.0);
  for (std::size_t v = 0; v < durations.size(); ++v)
    for (int c = column_begin_[v]; c < column_begin_[v + 1]; ++c)
      durations[v] += column_time_[c] * x[c];
  return durations;
}

double DeadlineModel::relaxed_objective() const {
  return lp_->solver.getObjValue();
}

std::optional<DeadlineOptimum> DeadlineModel::optimum(double time_limit) {
  OsiClpSolverInterface integer_program(lp_->solver);
  for (int c = 0; c < column_begin_.back(); ++c) integer_program.setInteger(c);
  CbcModel model(integer_program);
  // CbcMain0/1 run CBC as its command-line solver does, with its default cut generators and
  // heuristics; a bare CbcModel::branchAndBound has neither and is far slower here.
  CbcMain0(model);
  const std::string seconds = fmt::format("{}", time_limit);
  const char* argv[] = {"kareus", "-log", "0", "-seconds", seconds.c_str(), "-solve", "-quit"};
  CbcMain1(static_cast<int>(std::size(argv)), argv, model);
  if (model.bestSolution() == nullptr) return std::nullopt;
  const double* x = model.bestSolution();
  DeadlineOptimum result;
  result.assignment.assign(column_begin_.size() - 1, -1);
  for (std::size_t v = 0; v < result.assignment.size(); ++v)
    for (int c = column_begin_[v]; c < column_begin_[v + 1]; ++c)
      if (x[c] > 0.5) result.assignment[v] = option_of_column_[c];
  result.proven = model.isProvenOptimal();
  result.lower_bound =
      Joules(result.proven ? model.getObjValue() : model.getBestPossibleObjValue());
  return result;
}

}  // namespace kareus::frontier
