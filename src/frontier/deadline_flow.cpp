#include "deadline_flow.hpp"

#include <lemon/network_simplex.h>
#include <lemon/smart_graph.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>

#include "deadline_bounds.hpp"

// Why a min-cost flow solves the LP. In start and finish times the LP is: minimise
// sum_v f_v(F_v - S_v) + lambda M (lambda = P_blocking * stages) subject to S_w - F_v >= delay
// on every edge, S_v >= 0, F_v <= M <= T, where f_v is the lower convex hull of v's options in
// (time, e - P t): convex, decreasing, piecewise linear through vertices (t_0, c_0), ...,
// (t_k, c_k) with slopes sigma_1 < ... < sigma_k < 0, defined on [t_0, t_k] (the vertices that
// fit, see set_deadline). Every term is a convex function of one difference of two times. With
// the times as node potentials pi (O the time origin, M the makespan, S_v and F_v) and such a
// difference as the tension pi(head) - pi(tail) of an arc, this is an optimal tension problem, and
// its LP dual is a min-cost flow: for an arc with cost c and flow bounds [l, u], minimising the
// flow's cost sum c f over circulations has the dual
//   max over pi of sum_a min_{l <= f <= u} (c + pi(tail) - pi(head)) f = -min sum_a h_a(tension),
//   h_a(tau) = max(l (tau - c), u (tau - c)),
// a tension cost with slope l below c and slope u above (l = -inf forbids tau < c, u = +inf
// forbids tau > c). LEMON returns potentials that meet complementary slackness with its optimal
// flow, hence minimise sum_a h_a: optimal times. So each LP term is written as a sum of such
// hinges, one arc each:
//   - a hard bound tau <= c is [0, +inf) at cost c: S_w -> F_v at cost -delay (S_w >= F_v +
//     delay), S_v -> O at 0 for the roots (S_v >= 0), M -> F_v at 0 for the leaves (F_v <= M);
//   - f_v(tau) - c_0 = sigma_1 (tau - t_0) for tau >= t_0 (l = -inf, u = sigma_1, c = t_0; as the
//     reverse arc F_v -> S_v: flow in [-sigma_1, +inf), cost -t_0)
//       + sum_{0<j<k} (sigma_{j+1} - sigma_j) max(0, tau - t_j) (S_v -> F_v: [0, sigma_{j+1} -
//     sigma_j] at cost t_j)
//       + the bound tau <= t_k (S_v -> F_v: [0, +inf) at cost t_k);
//     between t_m and t_{m+1} its slope is sigma_1 + sum_{0<j<=m} (sigma_{j+1} - sigma_j) =
//     sigma_{m+1}, f_v's;
//   - lambda M with M <= T: l = lambda, u = +inf, c = T on O -> M (lambda (M - T) up to T).
// The flows are then marginal energies (watts) and the costs times. A deadline changes only the
// cost of O -> M and which vertex arc of each instruction is the open-ended one. A deadline no
// plan meets leaves no feasible tension, which in the flow is a cycle of infinite capacity and
// negative cost: LEMON reports UNBOUNDED.
//
// Network simplex needs integer data (its pivots compare reduced costs exactly; with floating
// costs, rounding noise can make it cycle on this very degenerate problem), so times and flows are
// scaled by powers of two to 64-bit integers. Times are rounded down and the deadline up by a
// relative 1e-14, so that a plan within the deadline in seconds is within it in integers (the
// margin covers the rounding of a deadline summed in floating point; a larger one shows in the
// optimum, 1e-10 by ~4e-9 relative, as the steepest slopes are hundreds of watts); durations are
// then within a few scaled units (~1e-13 s) of the real ones.
namespace kareus::frontier {
namespace {

using Integer = std::int64_t;
using Graph = lemon::SmartDigraph;
using Simplex = lemon::NetworkSimplex<Graph, Integer, Integer>;

constexpr Integer kInfinite = std::numeric_limits<Integer>::max();
static_assert(static_cast<int>(FlowPivotRule::first_eligible) == Simplex::FIRST_ELIGIBLE &&
              static_cast<int>(FlowPivotRule::block_search) == Simplex::BLOCK_SEARCH &&
              static_cast<int>(FlowPivotRule::altering_list) == Simplex::ALTERING_LIST);

// The largest power of two whose product with `total` is at most 2^58: LEMON's artificial arcs
// cost 2^62 and its potentials are that plus sums of costs along a tree path, so the costs' sum
// (and likewise every flow, bounded by the sum of the finite bounds) must stay well below 2^63.
double scale_for(double total) {
  int exponent = 0;
  std::frexp(std::ldexp(1.0, 58) / std::max(total, 1e-300), &exponent);
  return std::ldexp(1.0, std::min(exponent - 1, 200));
}

// One option set's convexified cost: hull vertices, fastest first.
struct Hull {
  std::vector<double> time, cost;
  double slope(std::size_t j) const {  // of the segment ending at vertex j >= 1
    return (cost[j] - cost[j - 1]) / (time[j] - time[j - 1]);
  }
  // f at duration d, linear beyond the ends (a duration is at most a scaled unit outside).
  double at(double d) const {
    if (time.size() == 1) return cost.front();
    std::size_t j = 1;
    while (j + 1 < time.size() && d > time[j]) ++j;
    return cost[j - 1] + slope(j) * (d - time[j - 1]);
  }
};

}  // namespace

struct DeadlineFlow::Network {
  Graph graph;
  Graph::ArcMap<Integer> cost{graph}, lower{graph}, upper{graph};
  std::unique_ptr<Simplex> simplex;
  Graph::Node origin, makespan;
  std::vector<Graph::Node> start, finish;
  Graph::Arc deadline_arc;
  std::vector<Hull> hulls;
  std::vector<int> hull_of;
  std::vector<std::vector<Graph::Arc>> vertex_arcs;  // per node, S_v -> F_v at t_j, per vertex j
  std::vector<int> open_vertex;   // per node, the vertex whose arc is unbounded (-1: none fits)
  std::vector<Integer> capacity;  // per arc id, its upper bound while its vertex fits
  std::vector<double> outside;    // per node, the longest path through it, its own time excluded
  double time_scale = 1, flow_scale = 1, lambda = 0, longest = 0;
  Simplex::PivotRule pivot_rule = Simplex::BLOCK_SEARCH;
  // The last optimum's times, per node id, in scaled units after the origin (empty: none).
  std::vector<Integer> times;
  // Scratch of earliest_times: per node id, the residual arcs into it (from, reduced cost).
  std::vector<std::vector<std::pair<int, Integer>>> residual_into;

  Integer scaled_time(double seconds) const {
    return static_cast<Integer>(std::floor(seconds * time_scale));
  }
  Integer scaled_flow(double watts) const { return std::llround(watts * flow_scale); }
  double seconds(Graph::Node from, Graph::Node to) const {
    return static_cast<double>(times[Graph::id(to)] - times[Graph::id(from)]) / time_scale;
  }

  // The LP is very degenerate (many instructions share their options, so slack can often move
  // between them at no cost) and which optimal times network simplex ends at depends on its pivots;
  // the fast end rounds them, so that would make its plans depend on the pivot rule (as they
  // depended on CLP's path). Instead, the earliest optimal times: optimal potentials are exactly
  // those that meet complementary slackness with one optimal flow, i.e. pi(v) <= pi(u) + c for
  // every residual arc u -> v of cost c (a forward arc below its upper bound, the reverse of one
  // above its lower bound at cost -c), a system of difference constraints whose least solution
  // with pi(origin) = 0 is pi(x) = -(shortest residual path from x to the origin): one optimum,
  // whichever the pivots found. LEMON's potentials make every residual reduced cost non-negative,
  // so Dijkstra finds those paths, towards the origin over the residual arcs reversed.
  void earliest_times() {
    const int nodes = graph.maxNodeId() + 1;
    residual_into.resize(nodes);
    for (auto& arcs : residual_into) arcs.clear();
    for (Graph::ArcIt a(graph); a != lemon::INVALID; ++a) {
      const auto from = graph.source(a), to = graph.target(a);
      const Integer flow = simplex->flow(a);
      const Integer reduced = cost[a] + simplex->potential(from) - simplex->potential(to);
      if (flow < upper[a]) residual_into[Graph::id(to)].emplace_back(Graph::id(from), reduced);
      if (flow > lower[a]) residual_into[Graph::id(from)].emplace_back(Graph::id(to), -reduced);
    }
    std::vector<Integer> distance(nodes, kInfinite);
    using Entry = std::pair<Integer, int>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
    distance[Graph::id(origin)] = 0;
    queue.emplace(0, Graph::id(origin));
    while (!queue.empty()) {
      const auto [d, x] = queue.top();
      queue.pop();
      if (d != distance[x]) continue;
      for (const auto& [y, w] : residual_into[x])
        if (d + w < distance[y]) queue.emplace(distance[y] = d + w, y);
    }
    // Every node reaches the origin over arcs of infinite capacity (back along the DAG to a root).
    times.resize(nodes);
    for (Graph::NodeIt x(graph); x != lemon::INVALID; ++x)
      times[Graph::id(x)] =
          simplex->potential(x) - simplex->potential(origin) - distance[Graph::id(x)];
  }
  Graph::Arc arc(Graph::Node from, Graph::Node to, Integer cost_value, Integer low, Integer high) {
    const auto a = graph.addArc(from, to);
    cost[a] = cost_value;
    lower[a] = low;
    upper[a] = high;
    capacity.push_back(high);
    return a;
  }
};

DeadlineFlow::DeadlineFlow(const PipelineProblem& problem, FlowPivotRule pivot_rule)
    : network_(std::make_unique<Network>()) {
  auto& net = *network_;
  net.pivot_rule = static_cast<Simplex::PivotRule>(pivot_rule);
  const auto& dag = problem.dag;
  const int n = static_cast<int>(dag.nodes.size());
  for (const auto& set : problem.option_sets) {
    auto& hull = net.hulls.emplace_back();
    for (int i : candidate_options(set, problem.p_blocking, true)) {
      hull.time.push_back(set[i].time.value());
      hull.cost.push_back((set[i].energy - problem.p_blocking * set[i].time).value());
    }
  }
  net.hull_of = problem.option_set_of;
  net.lambda = problem.p_blocking.value() * dag.stages;
  const auto delay = [&](const std::pair<int, int>& edge) {
    return dag.nodes[edge.first].stage != dag.nodes[edge.second].stage ? problem.transfer.value()
                                                                       : 0.0;
  };
  // Scales from the sums of every cost and every finite flow bound; a deadline beyond the longest
  // path of all-slowest options binds nothing and is capped there (set_deadline).
  std::vector<double> fastest(n);
  double times = 0, watts = net.lambda;
  for (int v = 0; v < n; ++v) {
    const auto& hull = net.hulls[net.hull_of[v]];
    fastest[v] = hull.time.front();
    for (double t : hull.time) times += t;
    net.longest += hull.time.back();
    if (hull.time.size() > 1) watts += 2 * -hull.slope(1);
  }
  for (const auto& edge : dag.edges) net.longest += delay(edge);
  net.time_scale = scale_for(times + 2 * net.longest);
  net.flow_scale = scale_for(watts);
  net.outside = outside_paths(problem, fastest);

  net.origin = net.graph.addNode();
  net.makespan = net.graph.addNode();
  for (int v = 0; v < n; ++v) {
    net.start.push_back(net.graph.addNode());
    net.finish.push_back(net.graph.addNode());
  }
  std::vector<char> has_predecessor(n, 0), has_successor(n, 0);
  for (const auto& edge : dag.edges) {
    net.arc(net.start[edge.second], net.finish[edge.first], -net.scaled_time(delay(edge)), 0,
            kInfinite);
    has_successor[edge.first] = has_predecessor[edge.second] = 1;
  }
  for (int v = 0; v < n; ++v) {
    if (!has_predecessor[v]) net.arc(net.start[v], net.origin, 0, 0, kInfinite);
    if (!has_successor[v]) net.arc(net.makespan, net.finish[v], 0, 0, kInfinite);
    const auto& hull = net.hulls[net.hull_of[v]];
    const std::size_t k = hull.time.size() - 1;
    net.arc(net.finish[v], net.start[v], -net.scaled_time(hull.time[0]),
            k > 0 ? -net.scaled_flow(hull.slope(1)) : 0, kInfinite);
    auto& arcs = net.vertex_arcs.emplace_back();
    // The hinge capacities telescope from the rounded slopes, so they sum to exactly what the
    // first arc carries and stay convex (non-negative).
    for (std::size_t j = 0; j <= k; ++j) {
      const Integer width =
          j == k   ? kInfinite
          : j == 0 ? 0
                   : net.scaled_flow(hull.slope(j + 1)) - net.scaled_flow(hull.slope(j));
      arcs.push_back(net.arc(net.start[v], net.finish[v], net.scaled_time(hull.time[j]), 0, width));
    }
    net.open_vertex.push_back(static_cast<int>(k));
  }
  net.deadline_arc = net.arc(net.origin, net.makespan, 0, net.scaled_flow(net.lambda), kInfinite);
  net.simplex = std::make_unique<Simplex>(net.graph);
  net.simplex->lowerMap(net.lower);
}

DeadlineFlow::~DeadlineFlow() = default;

void DeadlineFlow::set_deadline(Seconds deadline) {
  auto& net = *network_;
  const double t = deadline.value();
  net.cost[net.deadline_arc] =
      static_cast<Integer>(std::ceil(std::min(t, net.longest) * (1 + 1e-14) * net.time_scale));
  for (std::size_t v = 0; v < net.outside.size(); ++v) {
    // As DeadlineModel::set_deadline: only the vertices no longer than what is left of the
    // deadline (with its tolerance); the slowest of them becomes the arc without a bound.
    const auto& time = net.hulls[net.hull_of[v]].time;
    const double room = t - net.outside[v] + 1e-9 * t;
    const int fits =
        static_cast<int>(std::upper_bound(time.begin(), time.end(), room) - time.begin()) - 1;
    int& open = net.open_vertex[v];
    if (fits == open) continue;
    const auto& arcs = net.vertex_arcs[v];
    for (int j = 0; j < static_cast<int>(arcs.size()); ++j) {
      const auto id = Graph::id(arcs[j]);
      net.upper[arcs[j]] = j < fits ? net.capacity[id] : j == fits ? kInfinite : 0;
    }
    open = fits;
  }
}

std::optional<std::vector<double>> DeadlineFlow::relaxed_durations() {
  auto& net = *network_;
  net.times.clear();
  if (std::find(net.open_vertex.begin(), net.open_vertex.end(), -1) != net.open_vertex.end())
    return std::nullopt;
  // LEMON's network simplex starts each run from its artificial basis (it has no warm start);
  // what a resolve reuses is the graph and the scaled data, of which a deadline rewrote a few arcs.
  net.simplex->costMap(net.cost).upperMap(net.upper);
  if (net.simplex->run(net.pivot_rule) != Simplex::OPTIMAL) return std::nullopt;
  net.earliest_times();
  std::vector<double> durations(net.start.size());
  for (std::size_t v = 0; v < durations.size(); ++v)
    durations[v] = net.seconds(net.start[v], net.finish[v]);
  return durations;
}

double DeadlineFlow::objective() const {
  const auto& net = *network_;
  if (net.times.empty()) return std::numeric_limits<double>::quiet_NaN();
  double energy = net.lambda * net.seconds(net.origin, net.makespan);
  for (std::size_t v = 0; v < net.start.size(); ++v)
    energy += net.hulls[net.hull_of[v]].at(net.seconds(net.start[v], net.finish[v]));
  return energy;
}

}  // namespace kareus::frontier
