// SPDX-License-Identifier: Apache-2.0
#include "kareus/planner/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <future>
#include <numeric>
#include <optional>
#include <thread>
#include <utility>

#include "kareus/core/error.hpp"
#include "kareus/executor/executor.hpp"
#include "kareus/executor/iteration.hpp"
#include "kareus/planner/pooled_readings.hpp"
#include "kareus/planner/request.hpp"
#include "kareus/planner/selection.hpp"
#include "kareus/search/shared_picks.hpp"
#include "polish.hpp"

namespace kareus::planner {

using workload::Direction;

const char* to_string(Method m) {
  switch (m) {
    case Method::kMegatron:
      return "megatron";
    case Method::kPerseus:
      return "perseus";
    case Method::kNanobatchPerseus:
      return "nanobatch-perseus";
    case Method::kKareus:
      return "kareus";
    case Method::kKareusExhaustive:
      return "kareus-exhaustive";
  }
  return "?";
}

Method parse_method(const std::string& name) {
  for (Method m : {Method::kMegatron, Method::kPerseus, Method::kNanobatchPerseus, Method::kKareus,
                   Method::kKareusExhaustive})
    if (name == to_string(m)) return m;
  throw Error::invalid("command line", "method", name,
                       "allowed: megatron, perseus, nanobatch-perseus, kareus, kareus-exhaustive");
}

std::vector<Method> default_methods() {
  return {Method::kMegatron, Method::kPerseus, Method::kNanobatchPerseus, Method::kKareus};
}

const IterationPoint& MethodResult::min_energy() const {
  return *std::min_element(frontier.begin(), frontier.end(),
                           [](const auto& a, const auto& b) { return a.energy < b.energy; });
}

namespace {

int set_index(int stage, Direction d) {
  return 2 * stage + (d == Direction::kBackward ? 1 : 0);
}

KeyFrontiers search_keys(const workload::Workload& w, search::Strategy strategy,
                         const PlanOptions& options, MethodResult& result) {
  const auto exec = options.make_executor ? options.make_executor(w) : default_executor(w, options);
  KeyFrontiers keys;
  const auto partitions = partition::representative_partitions(w);
  PlanProgress progress{result.method};
  progress.partitions = partitions.size();
  // `kareus` shares its model-guided picks across the keys, in the order that lets them.
  std::optional<search::SharedPicks> shared;
  std::vector<std::size_t> order(partitions.size());
  std::iota(order.begin(), order.end(), 0);
  if (strategy == search::Strategy::kKareus) {
    shared.emplace(search::shared_picks(w, partitions, *exec));
    order = shared->order();
  }
  for (std::size_t i : order) {
    const partition::Partition& p = partitions[i];
    store::PartitionSearchOptions so;
    so.search.strategy = strategy;
    if (shared) so.search.model_picks = shared->draw(i);
    so.search.seed = options.seed;
    so.store = options.store;
    if (const auto b = options.key_budgets.find(p.key); b != options.key_budgets.end())
      so.search.budget = b->second;
    if (options.on_progress) {
      so.search.on_progress = [&options, &progress, &result](const search::SearchProgress& pr) {
        progress.current_fraction =
            pr.planned ? static_cast<double>(pr.measurements) / static_cast<double>(pr.planned)
                       : 0.0;
        progress.measurements = result.measurements + pr.measurements;
        options.on_progress(progress);
      };
    }
    auto r = store::search_partition(w, p, *exec, so);
    if (shared) shared->record(i, r.summary.measurements());
    result.measurements += r.summary.measurements();
    result.measurements_reused += r.summary.measurements_reused;
    result.profiling_gpu_hours += r.summary.gpu_hours + r.reused_gpu_hours;
    result.profiling_gpu_hours_reused += r.reused_gpu_hours;
    ++progress.partitions_done;
    progress.current_fraction = 0;
    progress.measurements = result.measurements;
    progress.measurements_reused = result.measurements_reused;
    if (options.on_progress) options.on_progress(progress);
    keys.emplace(p.key, std::move(r));
  }
  return keys;
}

// Profiling cost of the Perseus-style baselines: real training swept over every clock, each
// clock measured under the thermally stable protocol on every GPU of the job. The iteration at
// each clock is the pipeline's (stages overlap), not the sum of the stages' work.
double sweep_gpu_hours(const workload::Workload& w, const emulator::Emulator& emu,
                       emulator::Execution execution, const std::vector<MHz>& clocks) {
  const executor::MeasurementProtocol protocol;
  Seconds wall(0);
  for (MHz f : clocks) {
    emulator::IterationOptions io;
    io.clock = emulator::ClockPolicy::locked_at(f);
    io.execution = execution;
    wall += protocol.wall_time(emulator::simulate_iteration(w, emu, io).iteration_time, true);
  }
  return to_hours(wall) * w.total_gpus();
}

// A method's options and its pipeline problem, everything but the solve.
MethodResult prepare_method(const workload::Workload& w, const emulator::Emulator& emu,
                            Method method, const PlanOptions& options,
                            const emulator::OutsideWork& transfers) {
  MethodResult result;
  result.method = method;
  const auto clocks = w.gpu.search_clocks();
  KeyFrontiers keys;
  if (method == Method::kKareus || method == Method::kKareusExhaustive) {
    partition::require_nanobatch_split(w, "workload");
    keys =
        search_keys(w, method == Method::kKareus ? options.strategy : search::Strategy::kExhaustive,
                    options, result);
    if (options.on_key_frontiers) options.on_key_frontiers(method, keys);
  }
  // Composed from readings pooled across clocks (identical without estimated noise).
  const KeyFrontiers pooled = pooled_readings(keys);
  const auto& p = w.parallelism;
  result.option_sets.resize(2 * p.pp);
  for (int s = 0; s < p.pp; ++s) {
    for (Direction d : {Direction::kForward, Direction::kBackward}) {
      OptionSet set;
      switch (method) {
        case Method::kMegatron: {
          const auto r = emulator::run_instruction_sequential(
              w, emu, s, d, emulator::ClockPolicy::governor(w.gpu.power_limit_default));
          set.push_back({r.time, r.dynamic_energy, r.average_clock(), true, false, {}, {}, {}});
          break;
        }
        case Method::kPerseus:
          set = sequential_options(w, emu, s, d, clocks);
          break;
        case Method::kNanobatchPerseus:
          partition::require_nanobatch_split(w, "workload");
          set = default_nanobatch_options(w, emu, s, d, clocks);
          break;
        case Method::kKareus:
        case Method::kKareusExhaustive:
          set = composed_options(w, emu, s, d, clocks, pooled);
          if (options.clock_granularity == ClockGranularity::kPartition)
            set = partition_clock_options(w, emu, s, d, clocks, pooled, std::move(set),
                                          options.partition_clocks);
          break;
      }
      result.option_sets[set_index(s, d)] = std::move(set);
    }
  }
  result.key_frontiers = std::move(keys);
  if (method == Method::kPerseus || method == Method::kNanobatchPerseus)
    result.profiling_gpu_hours =
        sweep_gpu_hours(w, emu,
                        method == Method::kPerseus ? emulator::Execution::kSequential
                                                   : emulator::Execution::kNanobatch,
                        clocks);

  // The pipeline problem: one GPU per stage, energy = dynamic + static power x time.
  auto& prob = result.problem;
  prob.dag = workload::build_1f1b(p.pp, p.microbatches);
  prob.p_blocking = w.gpu.static_power;
  prob.transfer = transfers.time;
  for (const auto& set : result.option_sets) {
    std::vector<frontier::ExecutionOption> opts;
    for (const auto& o : set)
      opts.push_back({o.time, o.dynamic_energy + w.gpu.static_power * o.time});
    prob.option_sets.push_back(std::move(opts));
  }
  for (const auto& node : prob.dag.nodes)
    prob.option_set_of.push_back(set_index(node.stage, node.direction));
  check_unit_time(options, frontier::smallest_unit_time(prob));
  return result;
}

}  // namespace

IterationPoint JobConversion::point(const frontier::ParetoPoint& pt) const {
  IterationPoint ip;
  ip.plan = pt.first;
  ip.time = pt.time + tail_time;
  // Static power burns on every GPU, for the whole iteration.
  ip.dynamic_energy = job_dynamic_energy(workload, pt.time, pt.energy) + tail_dynamic_energy +
                      transfer_dynamic_energy;
  const double gpus = workload.total_gpus();
  ip.energy = ip.dynamic_energy + workload.gpu.static_power * ip.time * gpus;
  return ip;
}

namespace {

// The prepared method's pipeline frontier, as whole-job iteration points, polished for the
// options' selection. Reads nothing shared but the workload and options, so methods solve side by
// side.
void solve_method(const workload::Workload& w, const PlanOptions& options,
                  const emulator::OutsideWork& tail, const emulator::OutsideWork& transfers,
                  MethodResult& result) {
  frontier::PipelineSolverOptions so;
  so.unit_time = options.unit_time;
  if (options.on_solver_progress)
    so.on_progress = [&options, method = result.method](const frontier::PipelineSolverProgress& p) {
      options.on_solver_progress(method, p);
    };
  result.solver = frontier::solve_pipeline(result.problem, so);

  // Copies what it reads: the result outlives plan()'s workload and outside work.
  result.job = {w, tail.time, tail.dynamic_energy, transfers.dynamic_energy};
  result.unpolished = result.solver.frontier;
  result.polished_for = options.selection;
  if (options.selection.rule != SelectionRule::kMaxThroughput) {
    frontier::RefineProgressFn on_refine;
    if (options.on_refine_progress)
      on_refine = [&options, method = result.method](const frontier::RefineProgress& p) {
        options.on_refine_progress(method, p);
      };
    // When no point meets the selection the polish finds nothing, and plan() leaves the refusal
    // to the selection a front end makes, which may be of another method.
    result.refinement = polish_selection(options.selection, result, result.solver, on_refine);
  }
  result.frontier = job_frontier(result, result.solver);
}

}  // namespace

std::unique_ptr<executor::Executor> default_executor(const workload::Workload& w,
                                                     const PlanOptions& options) {
  return std::make_unique<executor::EmulatorExecutor>(
      emulator::Emulator(w.gpu, emulator::EmulatorOptions{options.noise_sigma, 0.0}),
      executor::MeasurementProtocol{}, options.seed);
}

PlanResult plan(const workload::Workload& w, const PlanOptions& options) {
  check_options(options, w);
  const emulator::Emulator emu(w.gpu);
  // Work outside the instructions is the same for every method, at the maximum clock, as
  // `kareus simulate` runs it.
  const auto at_max = emulator::ClockPolicy::locked_at(w.gpu.clock_max);
  const emulator::OutsideWork tail = emulator::iteration_tail(w, emu, at_max);
  const emulator::OutsideWork transfers = emulator::pipeline_transfers(w, emu, at_max);
  PlanResult result{w, {}, {}};
  // At a fine time unit a method's pipeline solve is most of its time and needs nothing from the
  // other methods, so it runs on its own thread while the next method's options are prepared and
  // the other solves run, at most one solve per core in flight. The results do not depend on it;
  // progress still reports each method done in order.
  struct Solving {
    Method method;
    std::future<void> solve;
  };
  std::deque<Solving> solving;
  const std::size_t most_in_flight = std::max(1U, std::thread::hardware_concurrency());
  const auto finish_oldest = [&] {
    const Method m = solving.front().method;
    solving.front().solve.get();
    solving.pop_front();
    const auto& r = result.methods.at(m);
    if (options.on_progress) {
      PlanProgress done{m};
      done.measurements = r.measurements;
      done.measurements_reused = r.measurements_reused;
      done.finished = true;
      done.frontier_points = r.frontier.size();
      done.profiling_gpu_hours = r.profiling_gpu_hours;
      done.profiling_gpu_hours_reused = r.profiling_gpu_hours_reused;
      done.solver = r.solver.summary;
      options.on_progress(done);
    }
  };
  for (Method m : options.methods) {
    if (options.on_progress) options.on_progress(PlanProgress{m});
    auto& r =
        result.methods.emplace(m, prepare_method(w, emu, m, options, transfers)).first->second;
    if (solving.size() >= most_in_flight) finish_oldest();
    solving.push_back(
        Solving{m, std::async(std::launch::async, [&w, &options, &tail, &transfers, &r] {
                  solve_method(w, options, tail, transfers, r);
                })});
  }
  while (!solving.empty()) finish_oldest();
  const auto find = [&](Method m) -> const MethodResult* {
    auto it = result.methods.find(m);
    return it == result.methods.end() ? nullptr : &it->second;
  };
  for (const auto& [m, r] : result.methods)
    result.metrics[m] = compute_metrics(r, find(Method::kMegatron), find(Method::kPerseus));
  return result;
}

std::vector<IterationPoint> ten_point_frontier(const MethodResult& m) {
  // Solver order: plan 0 is the least-energy end, the last plan the fastest.
  std::vector<IterationPoint> by_plan = m.frontier;
  std::sort(by_plan.begin(), by_plan.end(),
            [](const auto& a, const auto& b) { return a.time > b.time; });
  const std::size_t n = by_plan.size();
  if (n <= 10) return by_plan;
  // The artifact (create_frontier.sh) takes 15 samples back from the fastest plan with stride
  // ceil(n / 15) and drops sample positions 0, 2, 4, 6, 8. Its n runs into the thousands; for
  // a small n that stride can run past plan 0 (14 x stride > n - 1) and leave fewer than 15
  // samples, so the stride shrinks to the largest that fits 15, and below 15 points every point
  // is a sample. Dropping the first even positions until 10 remain always leaves 10 points.
  std::size_t stride = (n + 14) / 15;
  if (14 * stride > n - 1) stride = (n - 1) / 14;
  const std::size_t count = stride == 0 ? n : 15;
  if (stride == 0) stride = 1;
  std::vector<std::size_t> samples;
  for (std::size_t k = 0; k < count; ++k) samples.push_back(n - 1 - k * stride);
  std::sort(samples.begin(), samples.end());
  const std::size_t dropped = count - 10;
  std::vector<IterationPoint> out;
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (i % 2 != 0 || i >= 2 * dropped) out.push_back(by_plan[samples[i]]);
  return out;
}

Metrics compute_metrics(const MethodResult& m, const MethodResult* megatron,
                        const MethodResult* perseus) {
  Metrics out;
  if (megatron) {
    const auto& base = megatron->fastest();
    out.max_throughput_time_reduction = 1.0 - m.fastest().time / base.time;
    out.max_throughput_energy_reduction = 1.0 - m.fastest().energy / base.energy;
  }
  if (perseus) {
    // A relative 1e-9 lets a method meet Perseus's own point despite rounding.
    const auto& fastest = perseus->fastest();
    if (const auto* iso_time = least_energy_within(m.frontier, fastest.time * (1 + 1e-9)))
      out.iso_time_energy_reduction = 1.0 - iso_time->energy / fastest.energy;
    const auto& cheapest = perseus->min_energy();
    const auto* iso_energy = fastest_within(m.frontier, cheapest.energy * (1 + 1e-9));
    if (iso_energy) out.iso_energy_time_reduction = 1.0 - iso_energy->time / cheapest.time;
  }
  return out;
}

Schedule make_schedule(const PlanResult& plan, Method method, const IterationPoint& point) {
  const auto& m = plan.methods.at(method);
  return make_schedule(plan, SelectedPlan{method, {}, point, m.solver.assignment(point.plan), {}});
}

Schedule make_schedule(const PlanResult& plan, const SelectedPlan& selected) {
  const Method method = selected.method;
  const IterationPoint& point = selected.point;
  const auto& m = plan.methods.at(method);
  const auto& assignment = selected.assignment;
  Schedule s;
  s.workload = plan.workload.to_json();
  // The schedule names the execution model the runtime plays; the exhaustive search is only a
  // different way of finding a Kareus plan.
  s.method = to_string(method == Method::kKareusExhaustive ? Method::kKareus : method);
  s.gpu = plan.workload.gpu.name;
  s.predicted = {point.time, point.energy, point.dynamic_energy};
  const auto& dag = m.problem.dag;
  for (int stage = 0; stage < dag.stages; ++stage) {
    StageSchedule ss;
    ss.stage = stage;
    for (int node : dag.stage_order[stage]) {
      const auto& instr = dag.nodes[node];
      const auto& opt = m.option_sets[m.problem.option_set_of[node]][assignment[node]];
      ScheduleInstruction si;
      si.microbatch = instr.microbatch;
      si.direction = workload::to_string(instr.direction);
      // A governor instruction's clock is the average the governor reached (e.g. 1346 MHz on an
      // A100), which no GPU can lock. A lock at the maximum clock is the same run: the power
      // limit throttles a locked clock as it does the governor (NVML's locked-clocks rule, and
      // the emulator's evaluate_under), so the runtime can play a Megatron schedule.
      si.clock = opt.governor ? plan.workload.gpu.clock_max : MHz(std::round(opt.clock.value()));
      si.execution = opt.nanobatch ? "nanobatch" : "sequential";
      for (const auto& [key, c] : opt.configs) si.partitions[key] = {c.slot, c.sms};
      for (const auto& [key, c] : opt.recompute) si.recompute_partitions[key] = {c.slot, c.sms};
      for (MHz f : opt.step_clocks) si.step_clocks.push_back(MHz(std::round(f.value())));
      si.predicted_time = opt.time;
      si.predicted_energy = opt.dynamic_energy + plan.workload.gpu.static_power * opt.time;
      ss.instructions.push_back(std::move(si));
    }
    s.stages.push_back(std::move(ss));
  }
  return s;
}

}  // namespace kareus::planner
