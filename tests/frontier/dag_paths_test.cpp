#include "kareus/frontier/dag_paths.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kareus/core/rng.hpp"
#include "kareus/workload/pipeline.hpp"

namespace kareus::frontier {
namespace {

// A random DAG whose node ids are not in topological order (edges follow a random permutation),
// with instructions on a few stages so that some edges carry the transfer; or a 1F1B pipeline.
workload::PipelineDag random_dag(Rng& rng) {
  if (rng.uniform() < 0.3)
    return workload::build_1f1b(static_cast<int>(rng.integer(1, 6)),
                                static_cast<int>(rng.integer(1, 12)));
  const int n = static_cast<int>(rng.integer(1, 60));
  workload::PipelineDag dag;
  dag.nodes.resize(n);
  for (auto& node : dag.nodes) node.stage = static_cast<int>(rng.integer(0, 3));
  std::vector<int> rank(n);
  std::iota(rank.begin(), rank.end(), 0);
  for (int i = n - 1; i > 0; --i) std::swap(rank[i], rank[rng.integer(0, i)]);
  const double density = rng.uniform(0.02, 0.3);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      if (rng.uniform() < density) dag.edges.emplace_back(rank[a], rank[b]);
  return dag;
}

// Changes the durations of a random few instructions (sometimes none, sometimes all, sometimes
// to the same value); returns them, some listed twice.
template <class T, class Draw>
std::vector<int> change_some(Rng& rng, std::vector<T>& duration, const Draw& draw) {
  const int n = static_cast<int>(duration.size());
  const int count = static_cast<int>(rng.integer(0, std::min(n, rng.uniform() < 0.2 ? n : 4)));
  std::vector<int> changed;
  for (int k = 0; k < count; ++k) {
    const int v = static_cast<int>(rng.integer(0, n - 1));
    if (rng.uniform() < 0.8) duration[v] = draw();
    changed.push_back(v);
    if (rng.uniform() < 0.1) changed.push_back(v);
  }
  return changed;
}

// After every random change, the incremental passes must give exactly the full passes' values
// (bit for bit for doubles: the same sums in the same order per instruction), and `moved` must
// list exactly the instructions whose start or finish changed.
template <class T, class Draw>
void check_incremental_passes(std::uint64_t seed, T transfer_max, const Draw& draw_duration) {
  Rng rng(seed);
  int visited_fewer = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const auto dag = random_dag(rng);
    const DagPaths paths(dag);
    const int n = paths.size();
    const T transfer = rng.uniform() < 0.5 ? T{} : transfer_max;
    const auto draw = [&] { return draw_duration(); };
    std::vector<T> duration(n);
    for (auto& d : duration) d = draw();
    const auto of = [&](int v) { return duration[v]; };
    std::vector<T> start(n), finish(n), tail(n);
    paths.earliest_starts<T>(of, transfer, start, finish);
    paths.tails<T>(of, transfer, tail);
    std::vector<char> dirty(n, 0);
    for (int change = 0; change < 20; ++change) {
      const auto changed = change_some(rng, duration, draw);
      const auto old_start = start, old_finish = finish;
      std::vector<int> moved;
      paths.update_earliest_starts<T>(of, transfer, changed, start, finish, dirty, &moved);
      paths.update_tails<T>(of, transfer, changed, tail, dirty);
      std::vector<T> full_start(n), full_finish(n), full_tail(n);
      const T makespan = paths.earliest_starts<T>(of, transfer, full_start, full_finish);
      paths.tails<T>(of, transfer, full_tail);
      ASSERT_EQ(start, full_start) << "trial " << trial << " change " << change;
      ASSERT_EQ(finish, full_finish) << "trial " << trial << " change " << change;
      ASSERT_EQ(tail, full_tail) << "trial " << trial << " change " << change;
      ASSERT_EQ(paths.makespan(finish), makespan);
      ASSERT_EQ(dirty, std::vector<char>(n, 0));
      T latest{};
      for (int v = 0; v < n; ++v) latest = std::max(latest, full_finish[v]);
      ASSERT_EQ(makespan, latest);  // the leaves' latest finish is every instruction's
      std::vector<int> expected;
      for (int v = 0; v < n; ++v)
        if (old_start[v] != start[v] || old_finish[v] != finish[v]) expected.push_back(v);
      std::sort(moved.begin(), moved.end());
      ASSERT_EQ(moved, expected) << "trial " << trial << " change " << change;
      visited_fewer += static_cast<int>(moved.size()) < n;
    }
  }
  EXPECT_GT(visited_fewer, 1000);  // most updates leave some instruction alone
}

TEST(DagPaths, IncrementalPassesGiveTheFullPassesIntegerUnits) {
  Rng durations(5);
  check_incremental_passes<std::int64_t>(
      41, std::int64_t{3}, [&] { return static_cast<std::int64_t>(durations.integer(1, 9)); });
}

// Doubles: sums that are not exact, so any other order of additions would show.
TEST(DagPaths, IncrementalPassesGiveTheFullPassesBitForBit) {
  Rng durations(6);
  check_incremental_passes<double>(43, 0.037, [&] { return durations.uniform(0.001, 1.7); });
}

}  // namespace
}  // namespace kareus::frontier
