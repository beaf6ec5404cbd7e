// The pipeline solver's fast-end LP in its two formulations, on the A40 stage profiles of the
// Perseus artifact at 96 microbatches: `Multiple` is DeadlineModel's convexified multiple-choice LP
// (a column per hull option, every edge row one entry per option of the earlier instruction, a
// convexity row per instruction; the fast end's LP before), `Segments` is FastEndLp (hull segments,
// start and finish columns, two-entry edge rows; the fast end's LP now). Each builds the model,
// solves it at the fastest plan's time and resolves at 63 more deadlines up to 1.5 % above it,
// warm-started, as the fast end does. Counters (thread CPU, s): build_s, first_s, resolves_s;
// objective (J) at the fastest time, the same for both.
#include <benchmark/benchmark.h>

#include <time.h>

#include <filesystem>
#include <memory>
#include <type_traits>
#include <vector>

#include "fast_end_lp.hpp"
#include "kareus/frontier/deadline_model.hpp"
#include "kareus/frontier/stage_profile.hpp"

namespace {

using namespace kareus;
using namespace kareus::frontier;

double thread_cpu() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

template <class Lp>
void solve_deadlines(benchmark::State& state, const char* file) {
  const auto problem = pipeline_problem(
      read_stage_profile(std::filesystem::path(__FILE__).parent_path().parent_path() /
                         "tests/data/frontier" / file),
      96, Watts(70.38));
  std::vector<int> fastest(problem.dag.nodes.size());
  for (std::size_t v = 0; v < fastest.size(); ++v) {
    const auto& set = problem.option_sets[problem.option_set_of[v]];
    for (std::size_t i = 0; i < set.size(); ++i)
      if (set[i].time < set[fastest[v]].time) fastest[v] = static_cast<int>(i);
  }
  const double low = evaluate_plan(problem, fastest).time.value();
  constexpr int kDeadlines = 64;
  for (auto _ : state) {
    double clock = thread_cpu(), first = 0, resolves = 0, objective = 0;
    const auto lp = [&] {
      if constexpr (std::is_same_v<Lp, DeadlineModel>)
        return std::make_unique<DeadlineModel>(problem, true);
      else
        return std::make_unique<FastEndLp>(problem);
    }();
    state.counters["build_s"] = thread_cpu() - clock;
    for (int k = 0; k < kDeadlines; ++k) {
      clock = thread_cpu();
      lp->set_deadline(Seconds(low * (1 + 0.015 * k / kDeadlines)));
      const auto durations = lp->relaxed_durations();
      (k == 0 ? first : resolves) += thread_cpu() - clock;
      if (k == 0 && durations) {
        if constexpr (std::is_same_v<Lp, DeadlineModel>)
          objective = lp->relaxed_objective();
        else
          objective = lp->objective();
      }
    }
    state.counters["first_s"] = first;
    state.counters["resolves_s"] = resolves;
    state.counters["objective"] = objective;
  }
}

void BM_Multiple_GPT3_A40_M96(benchmark::State& state) {
  solve_deadlines<DeadlineModel>(state, "gpt3-175b+a40_bf16.csv");
}
void BM_Segments_GPT3_A40_M96(benchmark::State& state) {
  solve_deadlines<FastEndLp>(state, "gpt3-175b+a40_bf16.csv");
}
void BM_Multiple_Bloom_A40_M96(benchmark::State& state) {
  solve_deadlines<DeadlineModel>(state, "bloom+a40_bf16.csv");
}
void BM_Segments_Bloom_A40_M96(benchmark::State& state) {
  solve_deadlines<FastEndLp>(state, "bloom+a40_bf16.csv");
}

// Three runs each (Google Benchmark also reports their mean, median and spread).
BENCHMARK(BM_Multiple_GPT3_A40_M96)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);
BENCHMARK(BM_Segments_GPT3_A40_M96)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);
BENCHMARK(BM_Multiple_Bloom_A40_M96)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);
BENCHMARK(BM_Segments_Bloom_A40_M96)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);

}  // namespace

BENCHMARK_MAIN();
