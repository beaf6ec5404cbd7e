// SPDX-License-Identifier: Apache-2.0
#include "kareus/frontier/frontier_polish.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <limits>
#include <numeric>
#include <span>
#include <thread>

#include "dominator_tree.hpp"
#include "kareus/core/error.hpp"

namespace kareus::frontier {
namespace {

class Polisher {
 public:
  Polisher(const PipelineProblem& problem, const PolishOptions& options)
      : problem_(problem),
        n_(static_cast<int>(problem.dag.nodes.size())),
        order_(problem.dag.topological_order()),
        max_rounds_(options.max_rounds),
        most_speed_ups_(options.most_speed_ups),
        dominator_tree_(order_),
        post_dominator_tree_(std::vector<int>(order_.rbegin(), order_.rend())) {
    const auto& dag = problem.dag;
    std::vector<std::pair<int, Arc>> into, out_of;  // (owner, arc), in the DAG's edge order
    for (const auto& [from, to] : dag.edges) {
      const double delay =
          dag.nodes[from].stage != dag.nodes[to].stage ? problem.transfer.value() : 0.0;
      into.push_back({to, {from, delay}});
      out_of.push_back({from, {to, delay}});
    }
    pred_.build(n_, into);
    succ_.build(n_, out_of);
    const double p = problem.p_blocking.value();
    for (const auto& set : problem.option_sets) {
      // Time-effective energy e - P t: with the iteration time fixed, the energy is its sum plus a
      // constant. Only options that no other one beats in both time and it can help.
      std::vector<int> by_time(set.size());
      std::iota(by_time.begin(), by_time.end(), 0);
      const auto cost = [&](int i) { return set[i].energy.value() - p * set[i].time.value(); };
      std::sort(by_time.begin(), by_time.end(), [&](int a, int b) {
        return set[a].time != set[b].time ? set[a].time < set[b].time : cost(a) < cost(b);
      });
      auto& kept = pareto_.emplace_back();
      for (int i : by_time)
        if (kept.empty() || cost(i) < kept.back().cost)
          kept.push_back({set[i].time.value(), cost(i), i});
    }
    for (int v = 0; v < n_; ++v) rungs_of_.push_back(&pareto_[problem.option_set_of[v]]);
    // Partners: instructions that share many paths with v, so that speeding one up can make room
    // for slowing the other down.
    partners_.resize(n_);
    // Sized from the nodes, not dag.microbatches, which a hand-made DAG need not set.
    std::vector<std::vector<int>> of_microbatch;
    for (int v = 0; v < n_; ++v) {
      const auto m = static_cast<std::size_t>(std::max(0, dag.nodes[v].microbatch));
      if (m >= of_microbatch.size()) of_microbatch.resize(m + 1);
      of_microbatch[m].push_back(v);
    }
    for (const auto& chain : dag.stage_order) {
      const int size = static_cast<int>(chain.size());
      for (int k = 0; k < size; ++k) {
        auto& list = partners_[chain[k]];
        for (int j = std::max(0, k - options.stage_neighbours);
             j <= std::min(size - 1, k + options.stage_neighbours); ++j)
          if (j != k) list.push_back(chain[j]);
        for (int u : of_microbatch[std::max(0, dag.nodes[chain[k]].microbatch)])
          if (u != chain[k] && std::find(list.begin(), list.end(), u) == list.end())
            list.push_back(u);
      }
    }
    start_.resize(n_);
    tail_.resize(n_);
    position_.resize(n_);
    for (int k = 0; k < n_; ++k) position_[order_[k]] = k;
    latest_start_.resize(n_);
  }

  // Lowers the plan's time-effective energy with its longest path kept within `deadline`.
  void polish(std::vector<int>& plan, double deadline) {
    rung_.resize(n_);
    duration_.resize(n_);
    for (int v = 0; v < n_; ++v) {
      const auto& list = rungs(v);
      const int r =
          static_cast<int>(std::find_if(list.begin(), list.end(),
                                        [&](const Rung& rung) { return rung.option == plan[v]; }) -
                           list.begin());
      // An option some other one beats in time and cost: start from that one instead.
      set_rung(v, r == static_cast<int>(list.size()) ? slowest_within(v, duration_of(plan, v)) : r);
    }
    for (int round = 0; round < max_rounds_; ++round) {
      const bool slowed = slow_down(deadline);
      const bool paired = pair_moves(deadline);
      if (!speed_ups(deadline) && !paired && !slowed) break;
    }
    for (int v = 0; v < n_; ++v) plan[v] = rungs(v)[rung_[v]].option;
  }

 private:
  struct Rung {
    double time;
    double cost;
    int option;
  };
  struct Arc {
    int node;
    double delay;  // transfer time on the edge
  };
  // Arcs by owner in compressed rows: the passes over the DAG read them in one sweep.
  struct Adjacency {
    std::vector<int> begin;
    std::vector<Arc> arcs;

    // `arcs_by_owner`: (owner, arc); each owner's arcs keep their order.
    void build(int n, const std::vector<std::pair<int, Arc>>& arcs_by_owner) {
      begin.assign(n + 1, 0);
      for (const auto& entry : arcs_by_owner) ++begin[entry.first + 1];
      for (int v = 0; v < n; ++v) begin[v + 1] += begin[v];
      arcs.resize(arcs_by_owner.size());
      auto fill = begin;
      for (const auto& [owner, arc] : arcs_by_owner) arcs[fill[owner]++] = arc;
    }
    std::span<const Arc> operator[](int v) const {
      return {arcs.data() + begin[v], arcs.data() + begin[v + 1]};
    }
  };
  struct Move {
    double saving;
    int slower, slower_rung, faster, faster_rung;
  };

  const std::vector<Rung>& rungs(int v) const { return *rungs_of_[v]; }
  // The passes over the DAG read durations far more often than rungs change: kept per node.
  double duration(int v) const { return duration_[v]; }
  void set_rung(int v, int r) {
    rung_[v] = r;
    duration_[v] = rungs(v)[r].time;
  }
  double cost(int v) const { return rungs(v)[rung_[v]].cost; }
  double duration_of(const std::vector<int>& plan, int v) const {
    return problem_.option_sets[problem_.option_set_of[v]][plan[v]].time.value();
  }
  // The slowest (cheapest) rung of v whose time is at most `window`, or the fastest if none is.
  int slowest_within(int v, double window) const {
    const auto& list = rungs(v);
    const auto it = std::upper_bound(list.begin(), list.end(), window,
                                     [](double w, const Rung& r) { return w < r.time; });
    return std::max(0, static_cast<int>(it - list.begin()) - 1);
  }

  // The earliest starts from position `from` of order_ on; those before it must be exact already.
  void earliest_starts(int from = 0) {
    for (int k = from; k < n_; ++k) earliest_start(order_[k]);
  }

  // Every instruction to its cheapest option that fits between its predecessors' finishes and
  // its successors' latest starts, last ones first. True when one moved; each move is logged in
  // slowed_ as (instruction, its rung before). `held` (if any) keeps its option; the earliest
  // starts before position `from` must be exact.
  bool slow_down(double deadline, int held = -1, int from = 0) {
    earliest_starts(from);
    slowed_.clear();
    bool moved = false;
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const int v = *it;
      double finish = deadline;
      for (const auto& [w, delay] : succ_[v]) finish = std::min(finish, latest_start_[w] - delay);
      const int r = slowest_within(v, finish - start_[v]);
      if (r > rung_[v] && v != held) {
        slowed_.push_back({v, rung_[v]});
        set_rung(v, r);
        moved = true;
      }
      latest_start_[v] = finish - duration(v);
    }
    return moved;
  }

  // Pair moves by saving, largest first, each instruction in at most one per round. True when one
  // was taken.
  bool pair_moves(double deadline) {
    earliest_starts();
    tails(n_ - 1);
    const double rounding = 1e-9 * deadline;
    rounding_ = rounding;
    dominator_tree_.stale_from(0);
    post_dominator_tree_.stale_from(0);
    missed_.clear();
    const auto slack = [&](int v) { return deadline - (start_[v] + duration(v) + tail_[v]); };
    moves_.clear();
    for (int w = 0; w < n_; ++w) {
      const auto& list = rungs(w);
      if (rung_[w] + 1 == static_cast<int>(list.size())) continue;  // at its cheapest already
      const double slack_w = slack(w);
      // Speeding u up helps only if a longest path through w runs through u, and then no path
      // through u is shorter than that one.
      eligible_.clear();
      double most_freed = 0;
      for (int u : partners_[w]) {
        if (slack(u) > slack_w + rounding || rung_[u] == 0) continue;
        eligible_.push_back({u, -1});
        most_freed = std::max(most_freed, duration(u) - rungs(u).front().time);
      }
      for (int r = rung_[w] + 1; r < static_cast<int>(list.size()); ++r) {
        const double missing = list[r].time - duration(w) - slack_w;
        if (missing > most_freed + rounding) break;  // slower rungs miss more
        const double saving = cost(w) - list[r].cost;
        for (auto& [u, faster] : eligible_) {
          const double window = duration(u) - missing + rounding;
          // The window shrinks as r grows: the rung that fits moves down from the last one.
          if (faster < 0)
            faster = slowest_within(u, window);
          else
            while (faster > 0 && rungs(u)[faster].time > window) --faster;
          if (rungs(u)[faster].time > window) continue;
          const double net = saving - (rungs(u)[faster].cost - cost(u));
          if (net > 0) moves_.push_back({net, w, r, u, faster});
        }
      }
    }
    std::sort(moves_.begin(), moves_.end(),
              [](const Move& a, const Move& b) { return a.saving > b.saving; });
    touched_.assign(n_, 0);
    bool moved = false;
    for (const auto& m : moves_) {
      if (touched_[m.slower] || touched_[m.faster]) continue;
      // ... and, unless earlier moves left w room enough, every longest path through w has to
      // (the starts, tails and dominators are kept exact).
      const double room = deadline - (start_[m.slower] + duration(m.slower) + tail_[m.slower]);
      if (rungs(m.slower)[m.slower_rung].time - duration(m.slower) > room + rounding) {
        if (!dominates(m.faster, m.slower)) {
          missed_.push_back(m);
          continue;
        }
      }
      if (try_move(m.slower, m.slower_rung, m.faster, m.faster_rung, deadline)) {
        touched_[m.slower] = touched_[m.faster] = 1;
        moved = true;
      } else {
        missed_.push_back(m);
      }
    }
    return moved;
  }

  // Speed-ups, from the pair moves that did not fit (largest saving first): the faster partner is
  // then not on every longest path through the slower instruction, or another path is too close,
  // yet the time it frees may pay when every instruction that can use it does. The partner goes to
  // its faster option, all others are slowed into the room (slow_down with it held), and the
  // result is kept when the total falls; at most PolishOptions::most_speed_ups tries per round, so
  // a round stays linear in the DAG's size. True when one was kept.
  // A try changes the earliest starts only after its partner, and the total only when kept: both
  // are carried from try to try (pair_moves leaves the starts exact).
  bool speed_ups(double deadline) {
    bool moved = false;
    int tried = 0;
    tried_rung_.assign(n_, -1);
    double total = total_cost();
    int exact = n_;  // the earliest starts at positions below it are exact
    for (const auto& m : missed_) {
      if (tried == most_speed_ups_) break;
      // Already as fast (an earlier speed-up moved it), or this speed-up was just tried.
      if (rung_[m.faster] <= m.faster_rung || tried_rung_[m.faster] == m.faster_rung) continue;
      tried_rung_[m.faster] = m.faster_rung;
      ++tried;
      const int was = rung_[m.faster], at = position_[m.faster];
      set_rung(m.faster, m.faster_rung);
      slow_down(deadline, m.faster, std::min(exact, at + 1));
      // The starts were computed before the slow-downs, from the partner's new rung on.
      const double after = total_cost();
      if (after < total - 1e-12 * std::fabs(total)) {
        moved = true;
        total = after;
        exact = n_;
        for (const auto& [v, r] : slowed_) exact = std::min(exact, position_[v] + 1);
      } else {
        for (auto it = slowed_.rbegin(); it != slowed_.rend(); ++it)
          set_rung(it->first, it->second);
        set_rung(m.faster, was);
        exact = at + 1;
      }
    }
    return moved;
  }

  double total_cost() const {
    double sum = 0;
    for (int v = 0; v < n_; ++v) sum += cost(v);
    return sum;
  }

  // Moves instructions a and b to rungs ra and rb and recomputes the earliest starts from the
  // first of them on (those before it keep theirs); the move fits when no instruction then
  // finishes after the deadline. Past both, an instruction's tail (kept exact) does not change,
  // so a finish plus tail beyond the deadline (with room for rounding) already rules it out. When
  // it does not fit, everything is restored and the result is false.
  bool try_move(int a, int ra, int b, int rb, double deadline) {
    const int a_was = rung_[a], b_was = rung_[b];
    set_rung(a, ra);
    set_rung(b, rb);
    const int first = std::min(position_[a], position_[b]);
    const int last = std::max(position_[a], position_[b]);
    const double rounding = 1e-9 * deadline;
    int k = first;
    bool fits = true;
    for (; k < n_ && fits; ++k) {
      const int v = order_[k];
      const double finish = earliest_start(v) + duration(v);
      fits = finish <= deadline && (k <= last || finish + tail_[v] <= deadline + rounding);
    }
    if (fits) {
      // Few moves fit: keeping the tails exact costs little and rules out no move. The critical
      // edges changed into instructions from the first on (their starts) and out of those up to
      // the last (their tails): the dominators there are recomputed when next asked for.
      tails(last);
      dominator_tree_.stale_from(first);
      post_dominator_tree_.stale_from(n_ - 1 - last);
      return true;
    }
    set_rung(a, a_was);
    set_rung(b, b_was);
    for (int j = first; j < k; ++j) earliest_start(order_[j]);
    return false;
  }

  // Whether every longest path through w has u: u is on every longest path into w (w's
  // dominator over the critical edges into instructions), or on every one out of it.
  bool dominates(int u, int w) {
    const double rounding = rounding_;
    return dominator_tree_.dominates(u, w, [&](int v, const auto& add) {
      for (const auto& [p, delay] : pred_[v])
        if (start_[p] + duration(p) + delay >= start_[v] - rounding) add(p);
    }) || post_dominator_tree_.dominates(u, w, [&](int v, const auto& add) {
      for (const auto& [s, delay] : succ_[v])
        if (delay + duration(s) + tail_[s] >= tail_[v] - rounding) add(s);
    });
  }

  // Longest path from each instruction's end to the iteration's, for those at `last` and before
  // in order_: a tail depends on later instructions' durations alone, so past the last one whose
  // duration changed, the tails stand.
  void tails(int last) {
    for (int k = last; k >= 0; --k) {
      const int v = order_[k];
      double tail = 0;
      for (const auto& [w, delay] : succ_[v]) tail = std::max(tail, delay + duration(w) + tail_[w]);
      tail_[v] = tail;
    }
  }

  // Sets and returns v's earliest start from its predecessors'.
  double earliest_start(int v) {
    double s = 0;
    for (const auto& [u, delay] : pred_[v]) s = std::max(s, start_[u] + duration(u) + delay);
    return start_[v] = s;
  }

  const PipelineProblem& problem_;
  int n_;
  std::vector<int> order_;
  int max_rounds_;
  int most_speed_ups_;
  Adjacency pred_, succ_;
  std::vector<std::vector<Rung>> pareto_;  // per option set: time increasing, cost decreasing
  std::vector<std::vector<int>> partners_;
  std::vector<const std::vector<Rung>*> rungs_of_;  // per node: its set's pareto_
  std::vector<int> rung_;         // per node: its option's index in its set's pareto_
  std::vector<double> duration_;  // per node: its rung's time
  std::vector<double> start_, tail_, latest_start_;
  std::vector<Move> moves_;
  std::vector<Move> missed_;  // pair moves that did not fit this round, largest saving first
  std::vector<int> tried_rung_;
  std::vector<std::pair<int, int>>
      slowed_;  // the last slow_down's moves: (instruction, rung before)
  std::vector<char> touched_;
  std::vector<int> position_;  // position_[v]: v's index in order_
  // Partners of the instruction being slowed that can make room, each with the rung that last fit
  // (-1: none searched yet).
  std::vector<std::pair<int, int>> eligible_;
  double rounding_ = 0;  // this round's tolerance for a critical edge
  // Over the critical edges into instructions, and out of them (in reverse order).
  LazyDominatorTree dominator_tree_, post_dominator_tree_;
};

// Where to polish (see polish_frontier): indices of up to `count` points, by time.
std::vector<std::size_t> points_to_polish(const std::vector<ParetoPoint>& points, int count) {
  const auto time = [&](std::size_t i) { return points[i].time.value(); };
  const auto energy = [&](std::size_t i) { return points[i].energy.value(); };
  std::vector<std::size_t> hull;
  for (std::size_t i = 0; i < points.size(); ++i) {
    while (hull.size() >= 2) {
      const std::size_t a = hull[hull.size() - 2], b = hull.back();
      if ((time(b) - time(a)) * (energy(i) - energy(a)) -
              (energy(b) - energy(a)) * (time(i) - time(a)) >
          0)
        break;
      hull.pop_back();
    }
    hull.push_back(i);
  }
  std::vector<std::pair<double, std::size_t>> above;  // (relative energy above the hull, point)
  std::size_t segment = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    while (segment + 2 < hull.size() && time(hull[segment + 1]) <= time(i)) ++segment;
    if (segment + 1 >= hull.size()) break;
    const std::size_t a = hull[segment], b = hull[segment + 1];
    const double line =
        energy(a) + (energy(b) - energy(a)) * (time(i) - time(a)) / (time(b) - time(a));
    if (energy(i) > line) above.push_back({energy(i) / line - 1, i});
  }
  std::sort(above.begin(), above.end(), std::greater<>());
  const double apart = (time(points.size() - 1) - time(0)) / (4.0 * count);
  std::vector<std::size_t> chosen;
  for (const auto& candidate : above) {
    // A named copy, not a structured binding: clang before 16 cannot capture one in a lambda.
    const std::size_t i = candidate.second;
    if (static_cast<int>(chosen.size()) == count) break;
    if (std::all_of(chosen.begin(), chosen.end(),
                    [&](std::size_t j) { return std::fabs(time(i) - time(j)) >= apart; }))
      chosen.push_back(i);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

// Each plan polished at its deadline. The searches are independent of each other: they run side
// by side, at most one per core, and the results are in input order, so they do not depend on the
// threads.
std::vector<std::vector<int>> polish_each(const PipelineProblem& problem,
                                          const std::vector<std::vector<int>>& plans,
                                          const std::vector<Seconds>& deadlines,
                                          const PolishOptions& options) {
  std::vector<std::vector<int>> polished(plans.size());
  const std::size_t most_in_flight = std::max(1U, std::thread::hardware_concurrency());
  for (std::size_t first = 0; first < plans.size(); first += most_in_flight) {
    std::vector<std::future<void>> running;
    for (std::size_t k = first; k < std::min(plans.size(), first + most_in_flight); ++k)
      running.push_back(std::async(std::launch::async, [&, k] {
        polished[k] = polish_plan(problem, plans[k], deadlines[k], options);
      }));
    for (auto& r : running) r.get();
  }
  return polished;
}

}  // namespace

std::vector<int> polish_plan(const PipelineProblem& problem, std::vector<int> plan,
                             Seconds deadline, const PolishOptions& options) {
  const PlanCost before = evaluate_plan(problem, plan);
  Polisher polisher(problem, options);
  auto polished = plan;
  polisher.polish(polished, std::max(deadline, before.time).value());
  // The search sums durations in its own order; the guarantee is checked on the plan's own cost.
  const PlanCost after = evaluate_plan(problem, polished);
  if (after.time <= std::max(deadline, before.time) && after.energy < before.energy)
    return polished;
  return plan;
}

void polish_points(const PipelineProblem& problem, const std::vector<PolishTarget>& targets,
                   PipelineSolverResult& result, const PolishOptions& options) {
  if (targets.empty()) return;
  const auto clock_start = std::chrono::steady_clock::now();
  const auto& points = result.frontier.points();
  std::vector<Seconds> deadlines;
  std::vector<std::uint32_t> indices;
  for (const auto& target : targets) {
    if (target.point >= points.size())
      throw Error(
          fmt::format("polish_points: frontier point {} of {}", target.point, points.size()));
    deadlines.push_back(target.deadline);
    indices.push_back(points[target.point].first);
  }
  auto last_index = static_cast<std::uint32_t>(result.changes.size() - 1);
  indices.push_back(last_index);
  auto plans = result.assignments(indices);
  std::vector<int> last = std::move(plans.back());
  plans.pop_back();
  const auto polished = polish_each(problem, plans, deadlines, options);
  // polish_plan returns a plan within its deadline that saves energy, or the plan it was given.
  // Every saving plan is added; the pruning below drops those another one dominates.
  std::vector<ParetoPoint> kept(points.begin(), points.end());
  for (std::size_t k = 0; k < plans.size(); ++k) {
    if (polished[k] == plans[k]) continue;
    auto& changes = result.changes.emplace_back();
    for (int v = 0; v < static_cast<int>(last.size()); ++v)
      if (polished[k][v] != last[v]) changes.push_back(OptionChange{v, polished[k][v]});
    last = polished[k];
    const PlanCost cost = evaluate_plan(problem, last);
    kept.push_back(ParetoPoint{cost.time, cost.energy, ++last_index});
    ++result.summary.polished_plans;
  }
  result.frontier = ParetoSet::from_points(std::move(kept));
  result.summary.polish_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - clock_start).count();
}

void polish_frontier(const PipelineProblem& problem, int count, PipelineSolverResult& result,
                     const PolishOptions& options) {
  if (count <= 0 || result.frontier.empty()) return;
  // The fastest point too: it is the max-throughput selection.
  auto chosen = points_to_polish(result.frontier.points(), count);
  if (chosen.empty() || chosen.front() != 0) chosen.insert(chosen.begin(), 0);
  std::vector<PolishTarget> targets;
  for (std::size_t i : chosen) targets.push_back({i, result.frontier[i].time});
  polish_points(problem, targets, result, options);
}

void polish_within(const PipelineProblem& problem, Seconds deadline, int neighbours,
                   PipelineSolverResult& result, const PolishOptions& options) {
  const auto& points = result.frontier.points();
  // Energy falls with time along the frontier: the last point within the deadline is its least.
  const auto within = std::upper_bound(points.begin(), points.end(), deadline,
                                       [](Seconds t, const ParetoPoint& p) { return t < p.time; });
  const auto chosen = static_cast<std::size_t>(within - points.begin());
  std::vector<PolishTarget> targets;
  for (std::size_t k = chosen - std::min<std::size_t>(chosen, neighbours + 1); k < chosen; ++k)
    targets.push_back({k, deadline});
  polish_points(problem, targets, result, options);
}

void polish_within_budget(const PipelineProblem& problem,
                          const std::function<Joules(const ParetoPoint&)>& cost, Joules budget,
                          int neighbours, PipelineSolverResult& result,
                          const PolishOptions& options) {
  const auto& points = result.frontier.points();
  const auto within = std::find_if(points.begin(), points.end(),
                                   [&](const ParetoPoint& p) { return cost(p) <= budget; });
  if (within == points.end()) return;
  const auto chosen = static_cast<std::size_t>(within - points.begin());
  std::vector<PolishTarget> targets;
  for (std::size_t k = chosen - std::min<std::size_t>(chosen, neighbours); k <= chosen; ++k)
    targets.push_back({k, points[k].time});
  polish_points(problem, targets, result, options);
}

}  // namespace kareus::frontier
