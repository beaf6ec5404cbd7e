#include "kareus/frontier/deadline_model.hpp"

#include <fmt/format.h>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <ClpSolve.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>
#include <string>

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

// The options of one set that can be optimal, fastest first. An option another one beats in both
// time and time-effective energy e - P t never is (swap it for that one: no path gets longer and
// the energy falls). In the LP relaxation only lower-convex-hull vertices carry weight.
std::vector<int> candidate_options(const std::vector<ExecutionOption>& set, Watts p_blocking,
                                   bool convexify) {
  const auto cost = [&](int i) { return (set[i].energy - p_blocking * set[i].time).value(); };
  const auto time = [&](int i) { return set[i].time.value(); };
  std::vector<int> order(set.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return time(a) != time(b) ? time(a) < time(b) : cost(a) < cost(b);
  });
  std::vector<int> kept;
  for (int i : order) {
    if (!kept.empty() && cost(kept.back()) <= cost(i)) continue;
    if (convexify) {
      while (kept.size() >= 2) {
        const int o = kept[kept.size() - 2], a = kept.back();
        if ((time(a) - time(o)) * (cost(i) - cost(o)) - (cost(a) - cost(o)) * (time(i) - time(o)) >
            0)
          break;
        kept.pop_back();
      }
    }
    kept.push_back(i);
  }
  return kept;
}

}  // namespace

struct DeadlineModel::Lp {
  OsiClpSolverInterface solver;
  bool solved_once = false;
};

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

  // Coefficients as (row, column, value) triplets, packed once at the end: appending row by row
  // to a CoinPackedMatrix reallocates it each time (quadratic; 40 s at 8,000 instructions).
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
  // Longest path through each node with everything else at its fastest option: an option longer
  // than the deadline minus that can never be part of a plan within it (set_deadline drops it).
  std::vector<double> fastest(n), head(n, 0.0), tail(n, 0.0);
  for (int v = 0; v < n; ++v)
    fastest[v] = *std::min_element(column_time_.begin() + column_begin_[v],
                                   column_time_.begin() + column_begin_[v + 1]);
  std::vector<std::vector<std::pair<int, double>>> preds(n), succs(n);
  for (const auto& [from, to] : dag.edges) {
    const double delay =
        dag.nodes[from].stage != dag.nodes[to].stage ? problem.transfer.value() : 0.0;
    preds[to].emplace_back(from, delay);
    succs[from].emplace_back(to, delay);
  }
  const auto order = dag.topological_order();
  for (int v : order)
    for (const auto& [u, delay] : preds[v])
      head[v] = std::max(head[v], head[u] + fastest[u] + delay);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (const auto& [w, delay] : succs[*it])
      tail[*it] = std::max(tail[*it], delay + fastest[w] + tail[w]);
  for (int v = 0; v < n; ++v) outside_.push_back(head[v] + tail[v]);

  auto& solver = lp_->solver;
  solver.messageHandler()->setLogLevel(0);
  solver.getModelPtr()->setLogLevel(0);
  // CLP's initial solve otherwise installs a SIGINT handler of its own and puts the previous one
  // back afterwards, which is not thread-safe: two LPs solved side by side (kareus plan solves
  // its methods in parallel) can leave CLP's handler installed for good, and then Ctrl-C stops
  // nothing (Python never raises KeyboardInterrupt). Special option 2 = 1 is CLP's switch for
  // threaded use; it changes no pivot.
  ClpSolve options;
  options.setSpecialOption(2, 1);
  solver.setSolveOptions(options);
  const CoinPackedMatrix matrix(false, rows.data(), columns.data(), values.data(),
                                static_cast<CoinBigIndex>(values.size()));
  solver.loadProblem(matrix, lower.data(), upper.data(), objective.data(), row_lower.data(),
                     row_upper.data());
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
  auto& solver = lp_->solver;
  if (lp_->solved_once) {
    solver.resolve();
  } else {
    solver.initialSolve();
    lp_->solved_once = true;
  }
  if (!solver.isProvenOptimal()) return std::nullopt;
  const double* x = solver.getColSolution();
  std::vector<double> durations(column_begin_.size() - 1, 0.0);
  for (std::size_t v = 0; v < durations.size(); ++v)
    for (int c = column_begin_[v]; c < column_begin_[v + 1]; ++c)
      durations[v] += column_time_[c] * x[c];
  return durations;
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
