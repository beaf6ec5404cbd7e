// Speed of the pipeline time-energy solver (whole frontier, 1 ms unit) on:
//  - PP=2, M=8 and PP=10, M=128 (the Kareus paper's Llama-3.3-70B emulation shape) with a
//    synthetic 18-clock profile per stage and direction;
//  - PP=8, M=32 with the real A40 GPT-3 175B stage profile of the Perseus SOSP'24 artifact.
// Counters: steps (min-cut steps), points (frontier size after Pareto pruning).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "kareus/core/rng.hpp"
#include "kareus/frontier/stage_profile.hpp"

namespace {

using namespace kareus;
using namespace kareus::frontier;

// Synthetic, not measured: 18 clocks from 1410 MHz down in 30 MHz steps; 70 % of the time scales
// with 1/clock; power = 90 W + 310 W x (clock / 1410)^2.5; +-1 % noise. Backward is twice the
// forward; the first and last stages carry the embedding and LM head (+10 %, +25 %).
StageProfile synthetic_profile(int stages, std::uint64_t seed) {
  Rng rng(seed);
  StageProfile profile;
  profile.stages.resize(stages);
  for (int s = 0; s < stages; ++s) {
    const double stage_factor = s == 0 ? 1.10 : (s == stages - 1 ? 1.25 : 1.0);
    for (int d = 0; d < 2; ++d) {
      const double base = 0.12 * stage_factor * (d == 0 ? 1.0 : 2.0);
      for (int k = 0; k < 18; ++k) {
        const double ratio = (1410.0 - 30.0 * k) / 1410.0;
        const double time = base * (0.7 / ratio + 0.3) * rng.uniform(0.99, 1.01);
        const double power = 90.0 + 310.0 * std::pow(ratio, 2.5);
        profile.stages[s][d].push_back(
            {MHz(1410.0 * ratio), Seconds(time), Joules(power * time * rng.uniform(0.99, 1.01))});
      }
    }
  }
  return profile;
}

void run(benchmark::State& state, const StageProfile& profile, int microbatches, Watts p_blocking) {
  const auto problem = pipeline_problem(profile, microbatches, p_blocking);
  PipelineSolverResult result;
  for (auto _ : state) {
    result = solve_pipeline(problem);
    benchmark::DoNotOptimize(result);
  }
  state.counters["steps"] = result.summary.steps;
  state.counters["cuts"] = result.summary.min_cuts;
  state.counters["points"] = static_cast<double>(result.frontier.size());
  state.counters["critical"] = result.summary.mean_critical_nodes;
}

void BM_Synthetic_PP2_M8(benchmark::State& state) {
  run(state, synthetic_profile(2, 1), 8, Watts(83.64));
}

// Blocking power of an A40 from the Perseus artifact (profile_p2p.py): 70.38 W.
void BM_RealA40_PP8_M32(benchmark::State& state) {
  const auto path = std::filesystem::path(__FILE__).parent_path().parent_path() /
                    "tests/data/frontier/gpt3-175b+a40_bf16.csv";
  run(state, read_stage_profile(path), 32, Watts(70.38));
}

// Blocking power of an A100 from the Perseus artifact: 83.64 W.
void BM_Synthetic_PP10_M128(benchmark::State& state) {
  run(state, synthetic_profile(10, 2), 128, Watts(83.64));
}

BENCHMARK(BM_Synthetic_PP2_M8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RealA40_PP8_M32)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Synthetic_PP10_M128)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
