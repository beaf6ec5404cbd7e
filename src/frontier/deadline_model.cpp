// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/deadline_model.hpp"

#include <fmt/format.h>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <OsiClpSolverInterface.hpp>

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>
#include <string>

#include "clp_lp.hpp"
#include "deadline_bounds.hpp"
#include "kareus/core/error.hpp"

namespace kareus::frontier {
namespace {

// CbcMain0/1, CBC's command-line driver, keep state in file statics and are not made for
// concurrent calls (the planner refines every method's selection side by side), and CbcMain1
// installs a SIGINT handler of its own and leaves it installed when it returns, so Ctrl-C would no
// longer reach the program's handler, nor Python's KeyboardInterrupt come, after a solve. Held
// around the driver: solves take turns, and the handler that was there is put back.
class CbcDriverTurn {
 public:
  CbcDriverTurn() : lock_(mutex()) { sigaction(SIGINT, nullptr, &saved_); }
  ~CbcDriverTurn() { sigaction(SIGINT, &saved_, nullptr); }
  CbcDriverTurn(const CbcDriverTurn&) = delete;
  CbcDriverTurn& operator=(const CbcDriverTurn&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex one_at_a_time;
    return one_at_a_time;
  }
  std::lock_guard<std::mutex> lock_;
  struct sigaction saved_ {};
};

}  // namespace

struct DeadlineModel::Lp : ClpLp {};

DeadlineModel::DeadlineModel(const PipelineProblem& problem, bool convexify)
    : lp_(std::make_unique<Lp>()) {
  const auto& dag = problem.dag;
  const int n = static_cast<int>(dag.nodes.size());
  std::vector<std::vector<int>> candidates;
  for (const auto& set : problem.option_sets) {
    candidates.push_back(candidate_options(set, problem.p_blocking, convexify));
    auto& times = option_time_.emplace_back();
    for (const auto& o : set) times.push_back(o.time.value());
  }
  option_set_of_ = problem.option_set_of;
  std::vector<double> objective, lower, upper;
  column_begin_.push_back(0);
  for (int v = 0; v < n; ++v) {
    const int s = problem.option_set_of[v];
    for (int i : candidates[s]) {
      const auto& o = problem.option_sets[s][i];
      option_of_column_.push_back(i);
      column_time_.push_back(o.time.value());
      column_cost_.push_back((o.energy - problem.p_blocking * o.time).value());
      objective.push_back(column_cost_.back());
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

std::vector<int> DeadlineModel::start_columns(std::span<const int> start) const {
  const int n = static_cast<int>(option_set_of_.size());
  require(static_cast<int>(start.size()) == n, "MIP start", "options", std::to_string(start.size()),
          fmt::format("one per instruction, {}", n));
  std::vector<int> columns(n);
  for (int v = 0; v < n; ++v) {
    const auto& times = option_time_[option_set_of_[v]];
    require(start[v] >= 0 && start[v] < static_cast<int>(times.size()), "MIP start",
            fmt::format("instruction {}", v), std::to_string(start[v]),
            fmt::format("an option 0..{}", times.size() - 1));
    // The option itself, or (when it has no column: another option beats it in both time and
    // time-effective energy, or it is off the hull) the cheapest column no slower than it, which
    // keeps every path within the deadline.
    int best = -1;
    for (int c = column_begin_[v]; c < column_begin_[v + 1]; ++c)
      if (column_time_[c] <= times[start[v]] && (best < 0 || column_cost_[c] < column_cost_[best]))
        best = c;
    columns[v] = best;  // the fastest option always has a column, so best >= 0
  }
  return columns;
}

std::optional<DeadlineOptimum> DeadlineModel::optimum(double time_limit, std::span<const int> start,
                                                      std::span<const std::string> settings) {
  OsiClpSolverInterface integer_program(lp_->solver);
  const int x_columns = column_begin_.back();
  for (int c = 0; c < x_columns; ++c) integer_program.setInteger(c);
  std::vector<std::string> args{"kareus", "-log", "0", "-seconds", fmt::format("{}", time_limit)};
  std::vector<std::pair<std::string, double>> mip_start;
  if (!start.empty()) {
    // The start's energy: the LP with its options fixed (its starts and makespan follow).
    const auto columns = start_columns(start);
    OsiClpSolverInterface fixed(lp_->solver);
    std::vector<char> chosen(x_columns, 0);
    for (int c : columns) chosen[c] = 1;
    for (int c = 0; c < x_columns; ++c) {
      require(!chosen[c] || fixed.getColUpper()[c] >= 0.5, "MIP start", "plan", "given",
              "a plan within the deadline");
      fixed.setColBounds(c, chosen[c], chosen[c]);
      mip_start.emplace_back(integer_program.getColName(c), chosen[c]);
    }
    fixed.initialSolve();
    require(fixed.isProvenOptimal(), "MIP start", "plan", "given", "a plan within the deadline");
    // Only plans cheaper than the start are of interest; the margin keeps the start itself
    // acceptable as the incumbent (CBC discards a plan that does not beat the cutoff).
    const double energy = fixed.getObjValue();
    args.insert(args.end(), {"-cutoff", fmt::format("{:.17g}", energy + 1e-7 * std::fabs(energy))});
  }
  const CbcDriverTurn turn;
  CbcModel model(integer_program);
  // CbcMain0/1 run CBC as its command-line solver does, with its default cut generators and
  // heuristics; a bare CbcModel::branchAndBound has neither and is far slower here. CbcMain1 reads
  // the MIP start (by column name) and completes it with the LP over the continuous columns.
  CbcMain0(model);
  if (!mip_start.empty()) model.setMIPStart(mip_start);
  args.insert(args.end(), settings.begin(), settings.end());
  args.insert(args.end(), {"-solve", "-quit"});
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  CbcMain1(static_cast<int>(argv.size()), argv.data(), model);
  if (model.bestSolution() == nullptr) return std::nullopt;
  const double* x = model.bestSolution();
  DeadlineOptimum result;
  result.assignment.assign(column_begin_.size() - 1, -1);
  for (std::size_t v = 0; v < result.assignment.size(); ++v)
    for (int c = column_begin_[v]; c < column_begin_[v + 1]; ++c)
      if (x[c] > 0.5) result.assignment[v] = option_of_column_[c];
  result.proven = model.isProvenOptimal();
  result.time_limit_reached = model.isSecondsLimitReached();
  result.lower_bound =
      Joules(result.proven ? model.getObjValue() : model.getBestPossibleObjValue());
  return result;
}

}  // namespace kareus::frontier
