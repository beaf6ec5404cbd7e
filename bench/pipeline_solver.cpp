// Speed of the pipeline time-energy solver (whole frontier, 1 ms unit) on:
//  - PP=2, M=8 and PP=10, M=128 (the Kareus paper's Llama-3.3-70B emulation shape) with a
//    synthetic 18-clock profile per stage and direction;
//  - PP=8, M=32 and M=96 with the real A40 GPT-3 175B stage profile of the Perseus SOSP'24
//    artifact.
// Counters: steps (min-cut steps), runs (runs of steps taken on one cut at once), points
// (frontier size after Pareto pruning), solve_s (the solver's own wall time), polish_s (of it, the
// frontier polish), unpolished_s (the wall time of a solve without the polish), cold_s and
// same_frontier (the solve with every max flow from scratch, one unit step at a time, on one
// thread: its wall time, and 1 when its frontier equals the fast one point for point).
//
// Quality: on the two A40 profiles of the Perseus artifact at 12 and 24 microbatches, the energy
// of the solver's least-energy point within a deadline against the exact MILP (COIN-OR CBC, 20 s
// per deadline), at the fastest time and at 1, 10, 25, 50 and 75 % of the way from it to the
// least-energy end. CBC does not always prove optimality in that time, so two counters (%):
// `bound_*` = excess over CBC's lower bound (an upper bound on the excess over the optimum) and
// `cbc_*` = excess over CBC's best plan (negative: the solver's is better); `before_*` is
// `bound_*` without the fast-end LP plans and the polish (the min-cut steps alone), `steps_*`
// without the polish only, and `at_*` after polishing the frontier's plan within the deadline at
// that deadline (polish_plan alone; `at_ms` its total time), and `sel_*` what a user selecting at
// that deadline gets: the frontier's plan within it and its kSelectionNeighbours faster ones
// polished at the deadline (polish_within, as `kareus plan --deadline` runs it; `sel_ms` its
// total time; `selcbc_*` the same over CBC's best plan).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <limits>

#include "kareus/core/rng.hpp"
#include "kareus/frontier/deadline_model.hpp"
#include "kareus/frontier/frontier_polish.hpp"
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
  state.counters["runs"] = result.summary.multi_unit_steps;
  state.counters["points"] = static_cast<double>(result.frontier.size());
  state.counters["critical"] = result.summary.mean_critical_nodes;
  state.counters["lp_plans"] = result.summary.fast_end_plans;
  state.counters["lp_s"] = result.summary.fast_end_seconds;
  state.counters["solve_s"] = result.summary.solve_seconds;
  state.counters["polish_s"] = result.summary.polish_seconds;
  PipelineSolverOptions unpolished;
  unpolished.polish_points = 0;
  state.counters["unpolished_s"] = solve_pipeline(problem, unpolished).summary.solve_seconds;
  // The same problem with every max flow solved from scratch, one unit step at a time, on one
  // thread (the solver before): its time, and whether its frontier is point for point the same.
  PipelineSolverOptions cold;
  cold.warm_start = false;
  cold.multi_unit_steps = false;
  cold.threads = 1;
  const auto reference = solve_pipeline(problem, cold);
  state.counters["cold_s"] = reference.summary.solve_seconds;
  bool same = reference.frontier.size() == result.frontier.size();
  for (std::size_t i = 0; same && i < result.frontier.size(); ++i)
    same = reference.frontier[i].time == result.frontier[i].time &&
           reference.frontier[i].energy == result.frontier[i].energy;
  state.counters["same_frontier"] = same;
}

std::filesystem::path data_file(const char* name) {
  return std::filesystem::path(__FILE__).parent_path().parent_path() / "tests/data/frontier" / name;
}

// Least energy of the points within `deadline`.
double least_energy_within(const std::vector<ParetoPoint>& points, Seconds deadline) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& p : points)
    if (p.time <= deadline) best = std::min(best, p.energy.value());
  return best;
}

// The frontier before the fast-end LP: plans 0..steps are the min-cut steps, steps + 1 the fastest
// plan (every instruction at its fastest option, slowed where slack allows); the LP plans follow.
std::vector<ParetoPoint> min_cut_points(const PipelineProblem& problem,
                                        const PipelineSolverResult& result) {
  std::vector<std::uint32_t> indices(static_cast<std::size_t>(result.summary.steps) + 2);
  for (std::uint32_t i = 0; i < indices.size(); ++i) indices[i] = i;
  std::vector<ParetoPoint> points;
  for (const auto& plan : result.assignments(indices)) {
    const auto cost = evaluate_plan(problem, plan);
    points.push_back({cost.time, cost.energy});
  }
  return points;
}

void excess_over_optimum(benchmark::State& state, const char* file, int microbatches) {
  const auto problem =
      pipeline_problem(read_stage_profile(data_file(file)), microbatches, Watts(70.38));
  PipelineSolverResult result;
  for (auto _ : state) {
    result = solve_pipeline(problem);
    benchmark::DoNotOptimize(result);
  }
  const auto& frontier = result.frontier;
  const Seconds fastest = frontier.fastest().time;
  const Seconds slowest = frontier.min_energy().time;
  const auto before = min_cut_points(problem, result);
  PipelineSolverOptions unpolished;
  unpolished.polish_points = 0;
  const auto steps = solve_pipeline(problem, unpolished);
  DeadlineModel model(problem, false);
  double polish_ms = 0, selection_ms = 0;
  const std::array<std::pair<const char*, double>, 6> deadlines{{{"fastest", 0.0},
                                                                 {"d01", 0.01},
                                                                 {"d10", 0.10},
                                                                 {"d25", 0.25},
                                                                 {"d50", 0.50},
                                                                 {"d75", 0.75}}};
  const auto percent = [](double energy, double reference) {
    return 100.0 * (energy - reference) / reference;
  };
  for (const auto& [name, fraction] : deadlines) {
    const Seconds deadline = fastest + (slowest - fastest) * fraction;
    model.set_deadline(deadline * (1 + 1e-12));
    const auto optimum = model.optimum(20.0);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double bound = optimum ? optimum->lower_bound.value() : nan;
    const double cbc = optimum ? evaluate_plan(problem, optimum->assignment).energy.value() : nan;
    const double ours = least_energy_within(frontier.points(), deadline);
    state.counters[std::string("bound_") + name] = percent(ours, bound);
    state.counters[std::string("cbc_") + name] = percent(ours, cbc);
    state.counters[std::string("before_") + name] =
        percent(least_energy_within(before, deadline), bound);
    state.counters[std::string("steps_") + name] =
        percent(least_energy_within(steps.frontier.points(), deadline), bound);
    const auto within =
        std::upper_bound(frontier.begin(), frontier.end(), deadline,
                         [](Seconds t, const ParetoPoint& p) { return t < p.time; });
    const auto clock = std::chrono::steady_clock::now();
    const auto polished =
        polish_plan(problem, result.assignment(std::prev(within)->first), deadline);
    polish_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - clock).count();
    state.counters[std::string("at_") + name] =
        percent(evaluate_plan(problem, polished).energy.value(), bound);
    auto selected = result;
    const auto selection_clock = std::chrono::steady_clock::now();
    polish_within(problem, deadline, kSelectionNeighbours, selected);
    selection_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                              selection_clock)
                        .count();
    const double user = least_energy_within(selected.frontier.points(), deadline);
    state.counters[std::string("sel_") + name] = percent(user, bound);
    state.counters[std::string("selcbc_") + name] = percent(user, cbc);
  }
  state.counters["at_ms"] = polish_ms;
  state.counters["sel_ms"] = selection_ms;
  state.counters["polish_s"] = result.summary.polish_seconds;
  state.counters["lp_plans"] = result.summary.fast_end_plans;
}

void BM_Excess_GPT3_A40_M12(benchmark::State& state) {
  excess_over_optimum(state, "gpt3-175b+a40_bf16.csv", 12);
}
void BM_Excess_GPT3_A40_M24(benchmark::State& state) {
  excess_over_optimum(state, "gpt3-175b+a40_bf16.csv", 24);
}
void BM_Excess_Bloom_A40_M12(benchmark::State& state) {
  excess_over_optimum(state, "bloom+a40_bf16.csv", 12);
}
void BM_Excess_Bloom_A40_M24(benchmark::State& state) {
  excess_over_optimum(state, "bloom+a40_bf16.csv", 24);
}

void BM_Synthetic_PP2_M8(benchmark::State& state) {
  run(state, synthetic_profile(2, 1), 8, Watts(83.64));
}

// Blocking power of an A40 from the Perseus artifact (profile_p2p.py): 70.38 W.
void BM_RealA40_PP8_M32(benchmark::State& state) {
  run(state, read_stage_profile(data_file("gpt3-175b+a40_bf16.csv")), 32, Watts(70.38));
}
void BM_RealA40_PP8_M96(benchmark::State& state) {
  run(state, read_stage_profile(data_file("gpt3-175b+a40_bf16.csv")), 96, Watts(70.38));
}

// Blocking power of an A100 from the Perseus artifact: 83.64 W.
void BM_Synthetic_PP10_M128(benchmark::State& state) {
  run(state, synthetic_profile(10, 2), 128, Watts(83.64));
}

BENCHMARK(BM_Synthetic_PP2_M8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RealA40_PP8_M32)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_RealA40_PP8_M96)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Synthetic_PP10_M128)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Excess_GPT3_A40_M12)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Excess_GPT3_A40_M24)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Excess_Bloom_A40_M12)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Excess_Bloom_A40_M24)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
