// SPDX-License-Identifier: Apache-2.0
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
// per deadline, started from the plan a user selecting at that deadline gets, with its energy as
// the cutoff, so that CBC's time goes to the bound), at the fastest time and at 1, 10, 25, 50 and
// 75 % of the way from it to the least-energy end. Environment: KAREUS_BENCH_CBC_SECONDS (CBC's
// time per deadline, default 20), KAREUS_BENCH_DEADLINES (a comma-separated subset of fastest,
// d01, d10, d25, d50, d75; default all), KAREUS_BENCH_CBC_OPTIONS (CBC command-line options,
// space-separated; default kCbcOptions). CBC does not always prove optimality in that time, so
// two counters (%): `bound_*` = excess over CBC's lower bound (an upper bound on the excess over
// the optimum) and `cbc_*` = excess over CBC's best plan (never below the selection's, which it
// starts from); `sel_J_*`, `cbc_J_*`, `bound_J_*` are the energies (J) and `proven_*` is 1 when
// CBC proved its plan optimal; `before_*` is
// `bound_*` without the fast-end LP plans and the polish (the min-cut steps alone), `steps_*`
// without the polish only, and `at_*` after polishing the frontier's plan within the deadline at
// that deadline (polish_plan alone; `at_ms` its total time), and `sel_*` what a user selecting at
// that deadline gets: the frontier's plan within it and its kSelectionNeighbours faster ones
// polished at the deadline (polish_within, as `kareus plan --deadline` runs it; `sel_ms` its
// total time; `selcbc_*` the same over CBC's best plan). `win_*` / `wincbc_*` / `win_J_*`: the
// selection refined as `--milp-nodes 10` refines it (refine_within_deadline: the whole MILP, then
// windows), its seconds `win_s_*` (all cells: `win_s`), its CPU seconds `win_cpu_s_*` (this
// thread's: the refinement and CBC run on it, so the figure holds under load) and CBC solves
// `win_solves_*`; CBC's own run still starts from the selection.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "kareus/core/rng.hpp"
#include "kareus/frontier/deadline_model.hpp"
#include "kareus/frontier/deadline_refine.hpp"
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

// The deadlines, as a fraction of the way from the fastest time to the least-energy end.
constexpr std::array<std::pair<const char*, double>, 6> kDeadlines{
    {{"fastest", 0.0}, {"d01", 0.01}, {"d10", 0.10}, {"d25", 0.25}, {"d50", 0.50}, {"d75", 0.75}}};

// CPU seconds of the calling thread.
double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// A bad environment setting ends the bench: one line naming it, exit code 2.
[[noreturn]] void bad_setting(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::exit(2);
}

double cbc_seconds() {
  const char* text = std::getenv("KAREUS_BENCH_CBC_SECONDS");
  if (text == nullptr) return 20.0;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(seconds > 0) || !std::isfinite(seconds))
    bad_setting(std::string("KAREUS_BENCH_CBC_SECONDS: '") + text +
                "' is not a positive number of seconds");
  return seconds;
}

// Extra CBC options for every cell: none. Tried on one cell (GPT-3 x 24 at +10 %, the loosest
// bound): cut, strong-branching, node and preprocessing options moved the bound by under 0.002 %
// (docs/benchmarks/pipeline_solver.md).
constexpr const char* kCbcOptions = "";

std::vector<std::string> cbc_options() {
  const char* text = std::getenv("KAREUS_BENCH_CBC_OPTIONS");
  std::istringstream words(text != nullptr ? text : kCbcOptions);
  return {std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
}

// CBC nodes per solve of the `win_*` columns' refinement: what docs/benchmarks recommends.
constexpr int kRefineNodes = 10;

// Whether the deadline `name` is among KAREUS_BENCH_DEADLINES (all when it is unset).
bool deadline_selected(const std::string& name) {
  const char* text = std::getenv("KAREUS_BENCH_DEADLINES");
  if (text == nullptr) return true;
  std::istringstream list(text);
  bool selected = false;
  for (std::string item; std::getline(list, item, ',');) {
    if (std::none_of(kDeadlines.begin(), kDeadlines.end(),
                     [&](const auto& deadline) { return item == deadline.first; }))
      bad_setting("KAREUS_BENCH_DEADLINES: '" + item +
                  "' is not a deadline; allowed: fastest, d01, d10, d25, d50, d75");
    selected = selected || item == name;
  }
  return selected;
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
  double polish_ms = 0, selection_ms = 0, window_s = 0;
  const auto percent = [](double energy, double reference) {
    return 100.0 * (energy - reference) / reference;
  };
  const double seconds = cbc_seconds();
  const auto options = cbc_options();
  for (const auto& [name, fraction] : kDeadlines) {
    if (!deadline_selected(name)) continue;
    const Seconds deadline = fastest + (slowest - fastest) * fraction;
    const auto within =
        std::upper_bound(frontier.begin(), frontier.end(), deadline,
                         [](Seconds t, const ParetoPoint& p) { return t < p.time; });
    const auto clock = std::chrono::steady_clock::now();
    const auto polished =
        polish_plan(problem, result.assignment(std::prev(within)->first), deadline);
    polish_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - clock).count();
    auto selected = result;
    const auto selection_clock = std::chrono::steady_clock::now();
    polish_within(problem, deadline, kSelectionNeighbours, selected);
    selection_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                              selection_clock)
                        .count();
    // The selection's plan: the least-energy point within the deadline.
    const ParetoPoint* chosen = nullptr;
    for (const auto& p : selected.frontier)
      if (p.time <= deadline && (chosen == nullptr || p.energy < chosen->energy)) chosen = &p;
    const double user = chosen->energy.value();
    const double cpu_before = thread_cpu_seconds();
    const auto windows =
        refine_within_deadline(problem, selected.assignment(chosen->first), deadline, kRefineNodes);
    const double window_cpu_s = thread_cpu_seconds() - cpu_before;
    window_s += windows.seconds;
    model.set_deadline(deadline * (1 + 1e-12));
    const auto optimum = model.optimum(seconds, selected.assignment(chosen->first), options);
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
    state.counters[std::string("at_") + name] =
        percent(evaluate_plan(problem, polished).energy.value(), bound);
    state.counters[std::string("sel_") + name] = percent(user, bound);
    state.counters[std::string("selcbc_") + name] = percent(user, cbc);
    state.counters[std::string("sel_J_") + name] = user;
    state.counters[std::string("cbc_J_") + name] = cbc;
    state.counters[std::string("bound_J_") + name] = bound;
    state.counters[std::string("proven_") + name] = optimum && optimum->proven;
    const double refined = windows.cost.energy.value();
    state.counters[std::string("win_") + name] = percent(refined, bound);
    state.counters[std::string("wincbc_") + name] = percent(refined, cbc);
    state.counters[std::string("win_J_") + name] = refined;
    state.counters[std::string("win_s_") + name] = windows.seconds;
    state.counters[std::string("win_cpu_s_") + name] = window_cpu_s;
    state.counters[std::string("win_solves_") + name] = windows.solves;
  }
  state.counters["win_s"] = window_s;
  state.counters["cbc_s"] = seconds;
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

// The environment is read up front, so that a bad setting ends the run before any output.
int main(int argc, char** argv) {
  cbc_seconds();
  deadline_selected("fastest");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
