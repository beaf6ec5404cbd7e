// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/pipeline_solver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "change_queue.hpp"
#include "critical_subgraph.hpp"
#include "dag_graph.hpp"
#include "fast_end_lp.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/limits.hpp"
#include "kareus/frontier/frontier_polish.hpp"
#include "kareus/frontier/max_flow.hpp"
#include "option_hull.hpp"

namespace kareus::frontier {
namespace {

void validate(const PipelineProblem& problem) {
  const auto& dag = problem.dag;
  require(problem.option_set_of.size() == dag.nodes.size(), "pipeline problem", "option_set_of",
          fmt::format("{} entries", problem.option_set_of.size()),
          fmt::format("one per DAG node ({})", dag.nodes.size()));
  for (int set : problem.option_set_of) {
    require(set >= 0 && set < static_cast<int>(problem.option_sets.size()), "pipeline problem",
            "option_set_of", std::to_string(set),
            fmt::format("an index in [0, {})", problem.option_sets.size()));
  }
  for (std::size_t s = 0; s < problem.option_sets.size(); ++s) {
    const auto& set = problem.option_sets[s];
    const auto where = fmt::format("pipeline problem option set {}", s);
    require(!set.empty(), where, "options", "none", "at least one option");
    for (const auto& o : set) {
      require(std::isfinite(o.time.value()) && o.time.value() > 0, where, "time",
              format_number(o.time.value()), "a positive number of seconds");
      require(std::isfinite(o.energy.value()), where, "energy", format_number(o.energy.value()),
              "a finite number of joules");
    }
  }
  require(std::isfinite(problem.p_blocking.value()) && problem.p_blocking.value() >= 0,
          "pipeline problem", "p_blocking", format_number(problem.p_blocking.value()),
          "a number of watts >= 0");
  require(std::isfinite(problem.transfer.value()) && problem.transfer.value() >= 0,
          "pipeline problem", "transfer", format_number(problem.transfer.value()),
          "a number of seconds >= 0");
}

// Reports the steps to a progress callback: as they start, then at most every 0.1 s, so that a
// solve of a million one-unit steps does not pay a call per step.
class StepProgress {
 public:
  StepProgress(const PipelineSolverProgressFn& report, std::int64_t slowest, std::int64_t fastest)
      : report_(report), slowest_(slowest), total_(std::max<std::int64_t>(slowest - fastest, 0)) {}

  void at(std::int64_t makespan) {
    if (!report_) return;
    const auto now = std::chrono::steady_clock::now();
    if (reported_ && now - last_ < std::chrono::milliseconds(100)) return;
    reported_ = true;
    last_ = now;
    report_(progress(PipelineSolverProgress::Phase::kSteps, makespan));
  }

  void phase(PipelineSolverProgress::Phase phase, std::int64_t makespan) const {
    if (report_) report_(progress(phase, makespan));
  }

 private:
  PipelineSolverProgress progress(PipelineSolverProgress::Phase phase,
                                  std::int64_t makespan) const {
    return {phase, std::clamp<std::int64_t>(slowest_ - makespan, 0, total_), total_};
  }

  const PipelineSolverProgressFn& report_;
  std::int64_t slowest_;
  std::int64_t total_;
  bool reported_ = false;
  std::chrono::steady_clock::time_point last_;
};

class Solver {
 public:
  Solver(const PipelineProblem& problem, const PipelineSolverOptions& options)
      : problem_(problem),
        id_(problem.dag.topological_order()),
        graph_(Graph::numbered_by_rank(problem.dag, id_)),
        n_(static_cast<int>(problem.dag.nodes.size())),
        unit_(options.unit_time),
        warm_start_(options.warm_start),
        multi_unit_(options.multi_unit_steps),
        threads_(options.threads),
        fast_end_stops_(options.fast_end_stops_with_the_steps),
        on_progress_(options.on_progress) {
    for (const auto& set : problem.option_sets)
      hulls_.emplace_back(set, problem.p_blocking, options.unit_time);
    set_of_.resize(n_);
    for (int v = 0; v < n_; ++v) set_of_[v] = problem.option_set_of[id_[v]];
    double total = 0;  // summed in the problem's numbering, like every sum the output depends on
    for (int set : problem.option_set_of) total += hulls_[set].steepest_slope();
    // Capacities are joules x a power of two chosen so that any sum of them stays below 2^60:
    // the flow arithmetic is then exact integers with as much resolution as fits.
    int exponent = 0;
    std::frexp(std::ldexp(1.0, 60) / std::max(total, 1e-300), &exponent);
    scale_ = std::ldexp(1.0, std::min(exponent - 1, 200));
    transfer_units_ =
        static_cast<std::int64_t>(std::ceil(problem.transfer / options.unit_time - 1e-9));
    units_.resize(n_);
    for (int v = 0; v < n_; ++v) units_[v] = hull(v).slowest_units();
    start_.resize(n_);
    finish_.resize(n_);
    const std::int64_t slowest = planned_makespan();
    require(slowest <= kMaxPipelineSolverSteps, "pipeline solver", "least-energy iteration time",
            fmt::format("{} time units of {} s", slowest, format_number(unit_.value())),
            fmt::format("at most {} (one min-cut step each): use a coarser time unit",
                        kMaxPipelineSolverSteps));
    std::vector<std::int64_t> fastest(n_);
    for (int v = 0; v < n_; ++v) fastest[v] = hull(v).fastest_units();
    subgraph_.emplace(graph_, std::move(fastest));
    priced_units_.assign(n_, -1);
    price_lower_.resize(n_);
    price_upper_.resize(n_);
    mapped_start_.resize(n_);
    mapped_finish_.resize(n_);
    plan_start_.resize(n_);
    plan_finish_.resize(n_);
    real_latest_start_.resize(n_);
    shift_.assign(n_, 0);
    shortened_by_.resize(n_);
    shortened_most_.resize(n_);
    probe_start_.resize(n_);
    probe_finish_.resize(n_);
    if (warm_start_) build_network();
  }

  PipelineSolverResult run() {
    const auto clock_start = std::chrono::steady_clock::now();
    PipelineSolverResult result;
    auto& summary = result.summary;
    mapped_.resize(n_);
    for (int v = 0; v < n_; ++v) map(v, hull(v).option_at(units_[v]));
    plan_ = mapped_;
    const auto& sets = problem_.option_sets;
    const auto first_plan = in_problem_numbering(plan_);
    for (std::size_t i = 0; i < first_plan.size(); ++i) {
      busy_ += sets[problem_.option_set_of[i]][first_plan[i]].time;
      energy_ += sets[problem_.option_set_of[i]][first_plan[i]].energy;
    }
    std::vector<ParetoPoint> points{measure_plan(0, result.changes.emplace_back())};
    result.initial_assignment = in_problem_numbering(plan_);
    result.changes.front().clear();
    std::int64_t makespan = update_critical(planned_makespan(), 0);
    summary.unit_time = unit_;
    summary.planned_slowest_units = makespan;
    StepProgress progress(on_progress_, makespan, fastest_makespan());
    double critical_total = 0;
    // With a second thread, it measures each step's plan while this one takes the next step; it
    // alone touches mapped_, the plan state, result.changes and points until it is joined.
    ChangeQueue queue;
    // The fast end's LPs are set up and solved meanwhile too, on a third thread that reads only the
    // problem, the hulls and the graph, at the deadlines the fast end will most likely take, until
    // the steps end (fast_end_ahead).
    std::atomic<bool> steps_done{false};  // before the future, which may wait for the thread
    std::future<FastEndAhead> ahead;
    if (threads_ > 1)
      ahead = std::async(std::launch::async, [&] { return fast_end_ahead(steps_done); });
    std::exception_ptr meter_error;
    std::thread meter;
    if (threads_ > 1) {
      meter = std::thread([&] {
        try {
          std::vector<std::vector<OptionChange>> steps;
          while (queue.pop_all(steps))
            for (const auto& step : steps)
              points.push_back(measure_step(step, result, points.back()));
        } catch (...) {
          meter_error = std::current_exception();
        }
      });
    }
    // When the steps end, and on an exception too: the meter is joined and the LP thread told to
    // stop at its next solve.
    struct Join {
      ChangeQueue& queue;
      std::thread& meter;
      std::atomic<bool>& steps_done;
      void now() {
        steps_done = true;
        queue.close();
        if (meter.joinable()) meter.join();
      }
      ~Join() { now(); }
    } join{queue, meter, steps_done};
    // Whether the last network solved had a cut (nullopt: none solved yet).
    std::optional<bool> cut_found;
    while (!subgraph_->cannot_shorten()) {
      progress.at(makespan);
      if (network_changed(makespan) || !cut_found) {
        cut_found = solve_cut();
        ++summary.min_cuts;
      }
      if (!*cut_found) break;  // cannot happen from an optimal step; stop rather than guess
      std::vector<int> shortened, lengthened;
      for (int v = 0; v < n_; ++v) {
        if (!critical(v)) continue;
        const bool in_source = on_source_side(v, 0), out_source = on_source_side(v, 1);
        if (in_source && !out_source) shortened.push_back(v);
        if (!in_source && out_source && units_[v] < hull(v).slowest_units())
          lengthened.push_back(v);
      }
      const auto record_step = [&] {
        ++summary.steps;
        critical_total += subgraph_->count();
        std::vector<OptionChange> moved;  // in the solver's numbering: only measure_step reads it
        for (const auto* list : {&shortened, &lengthened})
          for (int v : *list) moved.push_back(OptionChange{v, hull(v).option_at(units_[v])});
        if (meter.joinable())
          queue.push(std::move(moved));
        else
          points.push_back(measure_step(moved, result, points.back()));
      };
      // No instruction before the first moved one in topological order changes its start.
      const int first = first_moved(shortened, lengthened);
      if (const std::int64_t run =
              multi_unit_ ? steps_on_this_cut(makespan, shortened, lengthened, first) : 0;
          run > 1) {
        // The unit steps would take this same cut `run` times: take them without rebuilding the
        // network in between (each is still its own plan, measured and recorded).
        for (std::int64_t j = 0; j < run; ++j) {
          for (int v : shortened) --units_[v];
          for (int v : lengthened) ++units_[v];
          record_step();
        }
        ++summary.multi_unit_steps;
        if (probed_ == run) {
          // The run check's last probe was this plan: its starts are the plan's.
          start_.swap(probe_start_);
          finish_.swap(probe_finish_);
          makespan = update_critical(makespan - run, first);
        } else {
          makespan = update_critical(planned_makespan(first), first);
        }
        continue;
      }
      for (int v : shortened) --units_[v];
      for (int v : lengthened) ++units_[v];
      // Lengthening a T->S instruction is free for critical paths but a near-critical path that
      // enters the cut's sink side off the critical subgraph can then grow; keep it off then.
      std::int64_t next_makespan = planned_makespan(first);
      if (next_makespan > makespan - 1) {
        for (int v : lengthened) --units_[v];
        lengthened.clear();
        ++summary.fallback_steps;
        next_makespan = planned_makespan(first);
      }
      record_step();
      makespan = update_critical(next_makespan, first);
    }
    join.now();
    if (meter_error) std::rethrow_exception(meter_error);
    summary.planned_fastest_units = makespan;
    progress.phase(PipelineSolverProgress::Phase::kFastEnd, makespan);
    const Seconds fastest_step_time = points.back().time;
    // Quantisation may have merged an instruction's fastest option into a slower one of the same
    // unit count; the fastest plan is still worth reporting exactly.
    for (int v = 0; v < n_; ++v) map(v, hull(v).fastest_option());
    points.push_back(measure_next_plan(result));
    const auto fast_end_start = std::chrono::steady_clock::now();
    fast_end(points.back().time, fastest_step_time, result, points,
             ahead.valid() ? ahead.get() : FastEndAhead{});
    summary.fast_end_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - fast_end_start).count();
    summary.mean_critical_nodes = summary.steps > 0 ? critical_total / summary.steps : 0.0;
    result.frontier = ParetoSet::from_points(std::move(points));
    summary.solve_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - clock_start).count();
    return result;
  }

 private:
  // A min-cut step's plan: its instructions' new mapped options, then measured. A step that stays
  // within each instruction's quantised option maps to the plan just measured (`previous`), whose
  // measurement depends on the mapped options alone: the same point, with no changes.
  ParetoPoint measure_step(const std::vector<OptionChange>& step, PipelineSolverResult& result,
                           const ParetoPoint& previous) {
    if (std::all_of(step.begin(), step.end(),
                    [&](const OptionChange& c) { return mapped_[c.node] == c.option; })) {
      result.changes.emplace_back();
      return ParetoPoint{previous.time, previous.energy,
                         static_cast<std::uint32_t>(result.changes.size() - 1)};
    }
    for (const auto& c : step) map(c.node, c.option);
    return measure_next_plan(result);
  }

  // How many unit steps in a row would take the cut that shortens `shortened` and lengthens
  // `lengthened`, when more than one (else 0): as long as the critical network and its prices stay
  // those of this step, its minimum cut does. The prices stay while every moved instruction stays
  // inside its hull segment. The network stays while every critical path gets exactly one unit
  // shorter per step (none leaves it) and no other path reaches the critical length: the longest
  // path after j steps is a maximum of lines in j, hence convex, and it is makespan - j at j = 0,
  // so it stays makespan - j up to the largest j where it still is (found by doubling, then
  // bisection); below that j no new path can have joined.
  std::int64_t steps_on_this_cut(std::int64_t makespan, const std::vector<int>& shortened,
                                 const std::vector<int>& lengthened, int first) {
    if (shortened.empty()) return 0;
    std::int64_t most = makespan - 1;
    for (int v : shortened)
      most = std::min(most, units_[v] - hull(v).same_slopes(units_[v]).first + 1);
    for (int v : lengthened)
      most = std::min(most, hull(v).same_slopes(units_[v]).second - units_[v] + 1);
    if (most < 2) return 0;
    for (int v : shortened) shift_[v] = -1;
    for (int v : lengthened) shift_[v] = 1;
    const std::int64_t run =
        every_critical_path_one_shorter(makespan) ? longest_run(makespan, most, first) : 0;
    for (const auto* list : {&shortened, &lengthened})
      for (int v : *list) shift_[v] = 0;
    return run;
  }

  // Over the critical network, the fewest and most units a path to each instruction's end gets
  // shorter by one step of shift_; true when that is one unit for every critical path.
  bool every_critical_path_one_shorter(std::int64_t makespan) {
    for (int v = 0; v < n_; ++v) {
      if (!critical(v)) continue;
      int fewest = start_[v] == 0 ? 0 : std::numeric_limits<int>::max();
      int most = start_[v] == 0 ? 0 : std::numeric_limits<int>::min();
      for (int i = graph_.pred_begin[v]; i < graph_.pred_begin[v + 1]; ++i) {
        const int u = graph_.pred[i];
        if (!critical_edge(u, v, graph_.pred_cross[i])) continue;
        fewest = std::min(fewest, shortened_by_[u]);
        most = std::max(most, shortened_most_[u]);
      }
      shortened_by_[v] = fewest - shift_[v];
      shortened_most_[v] = most - shift_[v];
      if (start_[v] + units_[v] == makespan && (shortened_by_[v] != 1 || shortened_most_[v] != 1))
        return false;
    }
    return true;
  }

  // The largest j <= most with a longest path of makespan - j after j steps of shift_, when >= 2
  // (the j where it holds are 0 up to that one: see steps_on_this_cut). The probes start at
  // position `first` of the order (no instruction before it is shifted), the positions before it
  // copied from the plan's; probed_ is the last j probed.
  std::int64_t longest_run(std::int64_t makespan, std::int64_t most, int first) {
    std::copy(start_.begin(), start_.end(), probe_start_.begin());
    std::copy(finish_.begin(), finish_.end(), probe_finish_.begin());
    const auto holds = [&](std::int64_t j) {
      probed_ = j;
      return graph_.earliest_starts<std::int64_t>([&](int v) { return units_[v] + j * shift_[v]; },
                                                  transfer_units_, probe_start_, probe_finish_,
                                                  first) == makespan - j;
    };
    // Most runs end at the hull bound (on GPT-3 x 96, 1,271 of 1,372): try it first.
    if (holds(most)) return most;
    std::int64_t good = 0, bad = most;
    for (std::int64_t j = 2; j < bad; j = std::min(2 * j, bad)) {
      if (!holds(j)) {
        bad = j;
        break;
      }
      good = j;
    }
    if (good < 2) return 0;
    while (bad - good > 1) {
      const std::int64_t mid = good + (bad - good) / 2;
      (holds(mid) ? good : bad) = mid;
    }
    return good;
  }

  // Sets instruction v's mapped option: the mapped starts from its position in the order on are
  // stale.
  void map(int v, int option) {
    mapped_[v] = option;
    mapped_from_ = std::min(mapped_from_, v);
  }

  // Measures mapped_ as the next plan of `result` (its changes from the previous plan recorded).
  ParetoPoint measure_next_plan(PipelineSolverResult& result, Seconds deadline = Seconds(0.0)) {
    const auto index = static_cast<std::uint32_t>(result.changes.size());
    return measure_plan(index, result.changes.emplace_back(), deadline);
  }

  // The longest path with each instruction v at option option_of(v), in real times.
  template <class OptionOf>
  Seconds measured_longest_path(const OptionOf& option_of) const {
    std::vector<Seconds> start(n_);
    return graph_.earliest_starts<Seconds>([&](int v) { return option(v, option_of(v)).time; },
                                           problem_.transfer, start);
  }

  // The longest path with every instruction at its fastest option, which is the fastest plan's
  // time up to the rounding of measuring it.
  Seconds fastest_time() const {
    return measured_longest_path([&](int v) { return hull(v).fastest_option(); });
  }

  // The least time the plan of a min-cut step can measure: every instruction at the option of its
  // fastest unit count. A step's plan has every instruction at that count or more, so at that
  // option or a slower one, and measuring only slows options. The last step's plan is often at
  // this time exactly (every Bloom and Llama-3.3-70B solve measured): the steps end on a critical
  // path at fastest unit counts from a root, and the other paths rarely measure longer.
  Seconds least_step_time() const {
    return measured_longest_path([&](int v) { return hull(v).option_at(hull(v).fastest_units()); });
  }

  struct FastEndAhead {
    std::vector<Seconds> deadlines;
    std::unique_ptr<FastEndLp> model;
    std::vector<std::optional<std::vector<double>>> durations;  // per deadline
  };

  // The fast end's LPs at its deadlines if the fastest plan measures its longest path and the
  // fastest step the least step time, both known before the first step; fast_end checks. The
  // first, at the fastest time, is the largest solve (from scratch); the others stop when the
  // steps are done, so that the fast end never waits for more than one solve it may not need.
  FastEndAhead fast_end_ahead(const std::atomic<bool>& steps_done) const {
    const Seconds fastest = fastest_time();
    FastEndAhead ahead{fast_end_deadlines(fastest, std::max(fastest, least_step_time())),
                       std::make_unique<FastEndLp>(problem_),
                       {}};
    // The fast end resolves at the fastest time at least.
    if (ahead.deadlines.empty()) ahead.deadlines.push_back(fastest);
    for (const Seconds deadline : ahead.deadlines) {
      if (!ahead.durations.empty() && fast_end_stops_ && steps_done) break;
      ahead.model->set_deadline(deadline);
      ahead.durations.push_back(ahead.model->relaxed_durations());
    }
    return ahead;
  }

  // One deadline per unit from `fastest` up to `fastest_step` (excluded), at most
  // kFastEndDeadlines of them, evenly spaced.
  std::vector<Seconds> fast_end_deadlines(Seconds fastest, Seconds fastest_step) const {
    const double gap_units = (fastest_step - fastest) / unit_;
    if (!(gap_units > 0)) return {};
    const int count = static_cast<int>(std::min<double>(kFastEndDeadlines, std::ceil(gap_units)));
    std::vector<Seconds> deadlines;
    for (int k = 0; k < count; ++k)
      deadlines.push_back(fastest + (fastest_step - fastest) * k / count);
    return deadlines;
  }

  // Between the fastest real time and the fastest min-cut step, the quantised steps cannot see
  // what the measured times allow: rounding every duration up to whole units makes the fastest
  // step up to a unit per instruction on the critical path slower than the fastest plan, and the
  // fastest plan itself keeps every instruction at full clock. There, at each unit from the
  // fastest time on, the least-energy plan of the LP relaxation (real times, convexified options)
  // is rounded down to measured options, then slowed where slack allows. The LPs solved ahead
  // (with a second thread) are taken as far as their deadlines are these (all of them when the
  // fastest step measured the least step time, else the first at most), and the rest are solved
  // here, in order, on the same model. That model may have solved other deadlines meanwhile,
  // which only moves CLP's start: the durations are the earliest optimal times, which do not
  // depend on the vertex CLP ends at (FastEndLp).
  void fast_end(Seconds fastest, Seconds fastest_step_time, PipelineSolverResult& result,
                std::vector<ParetoPoint>& points, FastEndAhead ahead) {
    const auto deadlines = fast_end_deadlines(fastest, fastest_step_time);
    if (deadlines.empty()) return;
    if (!ahead.model) ahead.model = std::make_unique<FastEndLp>(problem_);
    std::size_t k = 0;
    for (; k < std::min(deadlines.size(), ahead.durations.size()); ++k) {
      if (ahead.deadlines[k] != deadlines[k]) break;
      add_fast_end_plan(deadlines[k], ahead.durations[k], result, points);
    }
    for (; k < deadlines.size(); ++k) {
      ahead.model->set_deadline(deadlines[k]);
      add_fast_end_plan(deadlines[k], ahead.model->relaxed_durations(), result, points);
    }
  }

  // The LP's durations at `deadline` rounded to a plan, measured.
  void add_fast_end_plan(Seconds deadline, const std::optional<std::vector<double>>& durations,
                         PipelineSolverResult& result, std::vector<ParetoPoint>& points) {
    if (!durations) return;  // numerically infeasible at the bound: the fastest plan covers it
    ++result.summary.fast_end_plans;
    for (int v = 0; v < n_; ++v) {
      // Down to a measured option, so that no path gets longer than the LP's.
      const int i = hull(v).slowest_within((*durations)[id_[v]] * Seconds(1.0 + 1e-9));
      map(v, i < 0 ? hull(v).fastest_option() : i);
    }
    points.push_back(measure_next_plan(result, deadline));
  }

  const OptionHull& hull(int v) const { return hulls_[set_of_[v]]; }
  const ExecutionOption& option(int v, int i) const { return problem_.option_sets[set_of_[v]][i]; }

  // A per-instruction vector in the problem's numbering.
  std::vector<int> in_problem_numbering(const std::vector<int>& per_instruction) const {
    std::vector<int> out(n_);
    for (int v = 0; v < n_; ++v) out[id_[v]] = per_instruction[v];
    return out;
  }

  // start_ and finish_ of units_, recomputed from position `from` of the order on: the caller
  // knows the earlier instructions' durations unchanged since they were last computed.
  // The iteration with every instruction at its fastest option: where the steps end.
  std::int64_t fastest_makespan() const {
    std::vector<std::int64_t> start(n_), finish(n_);
    return graph_.earliest_starts<std::int64_t>([&](int v) { return hull(v).fastest_units(); },
                                                transfer_units_, start, finish);
  }

  std::int64_t planned_makespan(int from = 0) {
    return graph_.earliest_starts<std::int64_t>([&](int v) { return units_[v]; }, transfer_units_,
                                                start_, finish_, from);
  }

  // The first instruction of the lists in topological order, which is their least number (n_ when
  // they are empty).
  int first_moved(const std::vector<int>& shortened, const std::vector<int>& lengthened) const {
    int first = n_;
    for (const auto* list : {&shortened, &lengthened})
      for (int v : *list) first = std::min(first, v);
    return first;
  }

  // The critical subgraph of the planned durations, with start_ and finish_ holding their earliest
  // starts and finishes and `makespan` their makespan, brought up to date from position `from` of
  // the order on (no earlier instruction changed its units or start since the last call); with warm
  // starts, the kept network too (network_changed_), in the order of its edges: the bounds that
  // change are set in the order a pass over every bound would set them, so the max flow starts
  // from the same flow.
  std::int64_t update_critical(std::int64_t makespan, int from) {
    subgraph_->update(units_, start_, finish_, transfer_units_, makespan, from);
    network_changed_ = false;
    if (warm_start_)
      for (const auto& change : subgraph_->changes())
        network_changed_ |= change.edge < 0 ? update_instruction(change.instruction, makespan)
                                            : update_edge(change.instruction, change.edge);
    return makespan;
  }

  bool critical(int v) const { return subgraph_->critical()[v] != 0; }

  bool critical_edge(int u, int v, bool cross) const {
    return critical(u) && critical(v) &&
           start_[u] + units_[u] + (cross ? transfer_units_ : 0) == start_[v];
  }

  std::int64_t capacity(double joules) const { return std::llround(joules * scale_); }

  // Instruction v's arc bounds at its planned duration (priced again only when that moved).
  void price(int v) {
    if (priced_units_[v] == units_[v]) return;
    const auto& h = hull(v);
    price_lower_[v] = units_[v] < h.slowest_units() ? capacity(h.lengthen_saving(units_[v])) : 0;
    price_upper_[v] =
        units_[v] > h.fastest_units() ? capacity(h.shorten_cost(units_[v])) : kInfiniteCapacity;
    priced_units_[v] = units_[v];
  }

  // Brings the network to this step's critical subgraph; true when it changed. The critical
  // subgraph and its prices often survive a step (instructions inside a hull segment, no new
  // critical path): the same network has the same minimum cut.
  bool network_changed(std::int64_t makespan) {
    if (warm_start_) return network_changed_;
    flow_edges(makespan);
    if (edges_ == previous_edges_) return false;
    std::swap(edges_, previous_edges_);
    return true;
  }

  // The minimum cut of the network just brought up to date; false when none exists.
  bool solve_cut() {
    if (warm_start_) return network_.solve(0, 1);
    cold_side_ = cut_.min_cut(2 + 2 * subgraph_->count(), previous_edges_, 0, 1);
    return cold_side_.has_value();
  }

  // Whether critical instruction v's start (`end` 0) or finish (1) is on the cut's source side.
  bool on_source_side(int v, int end) const {
    return warm_start_ ? network_.source_side(start_node(v) + end)
                       : (*cold_side_)[2 + 2 * cold_index_[v] + end];
  }

  // Instruction v's start node in the kept network (its finish node is the next one): numbered,
  // like the instructions, in topological order, so the max flow's level searches visit the nodes
  // roughly in memory order.
  int start_node(int v) const { return 2 + 2 * v; }

  // The network of every step at once: node 0 = source, 1 = sink, instruction v an arc from its
  // start node to its finish node (edge v), each DAG edge i an edge n + i, and source and sink
  // edges at the DAG's roots and leaves only (every duration is at least one unit, so no other
  // instruction starts at 0 or ends at the makespan). A step sets the bounds of what is off the
  // critical subgraph to [0, 0] and keeps the flow elsewhere: a step changes few prices and adds
  // few critical paths, so the previous maximum flow is nearly maximum for the next network and the
  // max flow takes a few augmentations instead of hundreds, without rebuilding anything.
  void build_network() {
    network_.reset(2 + 2 * n_);
    for (int v = 0; v < n_; ++v) network_.add_edge(start_node(v), start_node(v) + 1);
    for (int v = 0; v < n_; ++v)
      for (int i = graph_.succ_begin[v]; i < graph_.succ_begin[v + 1]; ++i)
        network_.add_edge(start_node(v) + 1, start_node(graph_.succ[i]));
    source_edge_.assign(n_, -1);
    sink_edge_.assign(n_, -1);
    for (int v = 0; v < n_; ++v) {
      if (graph_.pred_begin[v] == graph_.pred_begin[v + 1])
        source_edge_[v] = network_.add_edge(0, start_node(v));
      if (graph_.succ_begin[v] == graph_.succ_begin[v + 1])
        sink_edge_[v] = network_.add_edge(start_node(v) + 1, 1);
    }
  }

  // The bounds of instruction v's arc and of its source or sink edge in the kept network; true when
  // any changed.
  bool update_instruction(int v, std::int64_t makespan) {
    const bool on = critical(v);
    if (on) price(v);
    bool changed = network_.set_bounds(v, on ? price_lower_[v] : 0, on ? price_upper_[v] : 0);
    if (source_edge_[v] >= 0)
      changed |=
          network_.set_bounds(source_edge_[v], 0, on && start_[v] == 0 ? kInfiniteCapacity : 0);
    if (sink_edge_[v] >= 0)
      changed |= network_.set_bounds(
          sink_edge_[v], 0, on && start_[v] + units_[v] == makespan ? kInfiniteCapacity : 0);
    return changed;
  }

  // The bounds of DAG edge i (a successor index) out of instruction u; true when they changed.
  bool update_edge(int u, int i) {
    const bool on = critical_edge(u, graph_.succ[i], graph_.succ_cross[i]);
    return network_.set_bounds(n_ + i, 0, on ? kInfiniteCapacity : 0);
  }

  // The critical subgraph alone, built from scratch (the solver without warm starts, for
  // comparison): node 0 = source, 1 = sink, each critical instruction k an arc 2 + 2k -> 3 + 2k.
  // Shortening costs `upper`, lengthening saves `lower`.
  void flow_edges(std::int64_t makespan) {
    edges_.clear();
    cold_index_.resize(n_);
    for (int v = 0, k = 0; v < n_; ++v) cold_index_[v] = critical(v) ? k++ : -1;
    for (int v = 0; v < n_; ++v) {
      const int k = cold_index_[v];
      if (k < 0) continue;
      price(v);
      edges_.push_back(BoundedEdge{2 + 2 * k, 3 + 2 * k, price_lower_[v], price_upper_[v]});
      if (start_[v] == 0) edges_.push_back(BoundedEdge{0, 2 + 2 * k});
      if (start_[v] + units_[v] == makespan) edges_.push_back(BoundedEdge{3 + 2 * k, 1});
      for (int i = graph_.succ_begin[v]; i < graph_.succ_begin[v + 1]; ++i) {
        const int w = graph_.succ[i];
        if (critical_edge(v, w, graph_.succ_cross[i]))
          edges_.push_back(BoundedEdge{3 + 2 * k, 2 + 2 * cold_index_[w]});
      }
    }
  }

  // The plan of a step: each instruction's mapped option, then slowed to its slowest (cheapest)
  // option that still fits between its predecessors' and successors' times, in reverse
  // topological order so that every instruction keeps the room its successors leave it. The
  // iteration time stays that of the mapped options; the energy can only fall.
  ParetoPoint measure_plan(std::uint32_t index, std::vector<OptionChange>& changes,
                           Seconds deadline = Seconds(0.0)) {
    const Seconds mapped_time =
        std::max(deadline, graph_.earliest_starts<Seconds>(
                               [&](int v) { return option(v, mapped_[v]).time; }, problem_.transfer,
                               mapped_start_, mapped_finish_, mapped_from_));
    mapped_from_ = n_;
    for (int v = n_ - 1; v >= 0; --v) {
      Seconds finish = mapped_time;
      for (int i = graph_.succ_begin[v]; i < graph_.succ_begin[v + 1]; ++i)
        finish = std::min(finish, real_latest_start_[graph_.succ[i]] -
                                      (graph_.succ_cross[i] ? problem_.transfer : Seconds(0.0)));
      const Seconds window = finish - mapped_start_[v];
      const auto& options = problem_.option_sets[set_of_[v]];
      const int chosen = hull(v).slowest_within(window + window * 1e-12, mapped_[v]);
      real_latest_start_[v] = finish - options[chosen].time;
      if (chosen == plan_[v]) continue;
      busy_ += options[chosen].time - options[plan_[v]].time;
      energy_ += options[chosen].energy - options[plan_[v]].energy;
      plan_[v] = chosen;
      plan_from_ = v;  // the order is walked backwards: the earliest change is last
      changes.push_back(OptionChange{id_[v], chosen});
    }
    const Seconds time =
        graph_.earliest_starts<Seconds>([&](int v) { return option(v, plan_[v]).time; },
                                        problem_.transfer, plan_start_, plan_finish_, plan_from_);
    plan_from_ = n_;
    const Joules energy = energy_ + problem_.p_blocking * (time * problem_.dag.stages - busy_);
    return ParetoPoint{time, energy, index};
  }

  const PipelineProblem& problem_;
  // The solver numbers the instructions by their position in the DAG's topological order, the
  // order every pass walks, so that the passes read each per-instruction array (and the kept
  // network's nodes) front to back; the DAG numbers them stage by stage, which made every pass
  // jump between ten regions of each array. id_[v] is instruction v's number in the problem,
  // used only where the solver meets the outside: the plans it emits, the fast end's LP
  // (problem_'s numbering) and the sums the output depends on, taken in the problem's order.
  std::vector<int> id_;
  Graph graph_;
  std::vector<int> set_of_;  // each instruction's option set
  int n_;
  Seconds unit_;
  bool warm_start_;
  bool multi_unit_;
  int threads_;
  bool fast_end_stops_;
  PipelineSolverProgressFn on_progress_;
  std::int64_t transfer_units_ = 0;  // rounded up, like the instructions' durations
  std::vector<OptionHull> hulls_;
  double scale_ = 1.0;
  std::vector<std::int64_t> units_, start_, finish_;
  // An instruction's arc bounds at priced_units_[v] (-1: not yet priced); a step moves few
  // instructions, so most keep their price.
  std::vector<std::int64_t> priced_units_, price_lower_, price_upper_;
  std::vector<int> mapped_, plan_;
  // The critical subgraph of the last update_critical (built once the hulls are known), and whether
  // the kept network changed there.
  std::optional<CriticalSubgraph> subgraph_;
  bool network_changed_ = false;
  // With warm starts, the network kept between steps (build_network) and the edge numbers of
  // the source and sink edges (-1: none); without, the critical network of this step and of the
  // last one solved, and its cut.
  MinCutSolver network_;
  std::vector<int> source_edge_, sink_edge_;
  std::vector<BoundedEdge> edges_, previous_edges_;
  std::vector<int> cold_index_;  // each critical instruction's number in edges_ (else -1)
  MinCutSolver cut_;
  std::optional<std::vector<char>> cold_side_;
  // The measuring passes: earliest starts and finishes of mapped_ and of plan_, each valid before
  // position *_from_ of the order (a step changes few instructions, the first about halfway down
  // the order), and the plan's latest starts.
  std::vector<Seconds> mapped_start_, mapped_finish_, plan_start_, plan_finish_, real_latest_start_;
  int mapped_from_ = 0, plan_from_ = 0;
  // Per instruction, for steps_on_this_cut: -1 shortened, +1 lengthened by the cut, else 0; the
  // fewest and most units a critical path to it gets shorter; earliest starts of a probe.
  std::vector<int> shift_, shortened_by_, shortened_most_;
  std::vector<std::int64_t> probe_start_, probe_finish_;
  std::int64_t probed_ = 0;
  Seconds busy_{0.0};
  Joules energy_{0.0};
};

}  // namespace

namespace {

void check_plan(const PipelineProblem& problem, const std::vector<int>& assignment) {
  validate(problem);
  require(assignment.size() == problem.dag.nodes.size(), "plan", "assignment",
          fmt::format("{} entries", assignment.size()),
          fmt::format("one per DAG node ({})", problem.dag.nodes.size()));
  for (std::size_t v = 0; v < assignment.size(); ++v) {
    const auto options = problem.option_sets[problem.option_set_of[v]].size();
    require(assignment[v] >= 0 && assignment[v] < static_cast<int>(options), "plan",
            fmt::format("assignment[{}]", v), std::to_string(assignment[v]),
            fmt::format("an option index in [0, {})", options));
  }
}

// The plan's makespan, each node's earliest start written to `start`.
Seconds plan_makespan(const PipelineProblem& problem, const std::vector<int>& assignment,
                      std::vector<Seconds>& start) {
  const auto& sets = problem.option_sets;
  const auto& of = problem.option_set_of;
  start.resize(assignment.size());
  return Graph(problem.dag)
      .earliest_starts<Seconds>([&](int v) { return sets[of[v]][assignment[v]].time; },
                                problem.transfer, start);
}

}  // namespace

PlanCost evaluate_plan(const PipelineProblem& problem, const std::vector<int>& assignment) {
  check_plan(problem, assignment);
  const auto& sets = problem.option_sets;
  const auto& of = problem.option_set_of;
  Seconds busy{0.0};
  Joules energy{0.0};
  for (std::size_t v = 0; v < assignment.size(); ++v) {
    busy += sets[of[v]][assignment[v]].time;
    energy += sets[of[v]][assignment[v]].energy;
  }
  std::vector<Seconds> start;
  const Seconds time = plan_makespan(problem, assignment, start);
  return PlanCost{time, energy + problem.p_blocking * (time * problem.dag.stages - busy)};
}

std::vector<Seconds> plan_start_times(const PipelineProblem& problem,
                                      const std::vector<int>& assignment) {
  check_plan(problem, assignment);
  std::vector<Seconds> start;
  plan_makespan(problem, assignment, start);
  return start;
}

std::vector<std::vector<int>> PipelineSolverResult::assignments(
    const std::vector<std::uint32_t>& indices) const {
  std::vector<std::size_t> order(indices.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    require(indices[i] < changes.size(), "pipeline frontier", "plan", std::to_string(indices[i]),
            fmt::format("a plan index in [0, {})", changes.size()));
    order[i] = i;
  }
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return indices[a] < indices[b]; });
  std::vector<std::vector<int>> plans(indices.size());
  std::vector<int> plan = initial_assignment;
  std::uint32_t applied = 0;
  for (std::size_t i : order) {
    for (; applied < indices[i]; ++applied)
      for (const auto& c : changes[applied + 1]) plan[c.node] = c.option;
    plans[i] = plan;
  }
  return plans;
}

std::vector<int> PipelineSolverResult::assignment(std::uint32_t index) const {
  return assignments({index}).front();
}

double PipelineSolverProgress::steps_fraction() const {
  if (phase != Phase::kSteps || units_to_shorten <= 0) return 1.0;
  return static_cast<double>(units_shortened) / static_cast<double>(units_to_shorten);
}

std::string PipelineSolverSummary::to_string() const {
  return fmt::format(
      "pipeline solver: {} steps ({} max-flow solves) from {} to {} time units, {} with "
      "off-critical lengthening undone, {} taken several at once, {:.1f} critical instructions per "
      "step on average, {} fast-end LP plans ({:.3f} s), {} polished plans ({:.3f} s), {:.3f} s",
      steps, min_cuts, planned_slowest_units, planned_fastest_units, fallback_steps,
      multi_unit_steps, mean_critical_nodes, fast_end_plans, fast_end_seconds, polished_plans,
      polish_seconds, solve_seconds);
}

Seconds smallest_unit_time(const PipelineProblem& problem) {
  validate(problem);
  const auto& sets = problem.option_sets;
  const auto& of = problem.option_set_of;
  std::vector<Seconds> slowest(sets.size(), Seconds(0));
  for (std::size_t s = 0; s < sets.size(); ++s)
    for (const auto& o : sets[s]) slowest[s] = std::max(slowest[s], o.time);
  const Graph graph(problem.dag);
  std::vector<Seconds> start(of.size());
  const Seconds makespan = graph.earliest_starts<Seconds>([&](int v) { return slowest[of[v]]; },
                                                          problem.transfer, start);
  // The least-energy iteration, quantised, is at most the iteration with every instruction at its
  // slowest option plus one unit per instruction and per transfer on its longest path (each is
  // rounded up): at most two per instruction.
  const auto steps = static_cast<double>(kMaxPipelineSolverSteps);
  const double margin = 2.0 * static_cast<double>(of.size());
  static_assert(4 * kMaxInstructions <= kMaxPipelineSolverSteps,
                "two units per instruction must leave half the steps");
  require(static_cast<std::int64_t>(of.size()) <= kMaxInstructions, "pipeline problem",
          "instructions", std::to_string(of.size()), fmt::format("at most {}", kMaxInstructions));
  return std::max({makespan / (steps - margin),
                   *std::max_element(slowest.begin(), slowest.end()) / steps,
                   problem.transfer / steps});
}

PipelineSolverResult solve_pipeline(const PipelineProblem& problem,
                                    const PipelineSolverOptions& options) {
  validate(problem);
  require(options.unit_time.value() > 0 && std::isfinite(options.unit_time.value()),
          "pipeline solver", "unit_time", format_number(options.unit_time.value()),
          "a positive number of seconds");
  const double unit = options.unit_time.value();
  require(problem.transfer.value() / unit <= static_cast<double>(kMaxPipelineSolverSteps),
          "pipeline problem", "transfer", format_number(problem.transfer.value()),
          fmt::format("at most {} time units", kMaxPipelineSolverSteps));
  for (std::size_t s = 0; s < problem.option_sets.size(); ++s) {
    for (const auto& o : problem.option_sets[s]) {
      require(o.time.value() / unit <= static_cast<double>(kMaxPipelineSolverSteps),
              fmt::format("pipeline problem option set {}", s), "time",
              fmt::format("{} s ({:g} time units of {} s)", format_number(o.time.value()),
                          o.time.value() / unit, format_number(unit)),
              fmt::format("at most {} time units", kMaxPipelineSolverSteps));
    }
  }
  auto result = Solver(problem, options).run();
  if (options.on_progress) {
    const auto units = result.summary.planned_slowest_units - result.summary.planned_fastest_units;
    options.on_progress({PipelineSolverProgress::Phase::kPolish, units, units});
  }
  polish_frontier(problem, options.polish_points, result);
  result.summary.solve_seconds += result.summary.polish_seconds;
  return result;
}

}  // namespace kareus::frontier
