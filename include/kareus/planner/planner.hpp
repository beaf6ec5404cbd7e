// SPDX-License-Identifier: Apache-2.0
// Planning a training job: per method, the iteration time-energy frontier over the 1F1B
// pipeline, from per-instruction options and the Perseus-style pipeline solver; selection of a
// plan by deadline, energy budget or maximum throughput; the paper's metrics.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kareus/executor/executor.hpp"
#include "kareus/frontier/deadline_refine.hpp"
#include "kareus/frontier/pipeline_solver.hpp"
#include "kareus/planner/composition.hpp"
#include "kareus/planner/partition_clocks.hpp"
#include "kareus/planner/progress.hpp"
#include "kareus/schedule/schedule.hpp"
#include "kareus/search/search.hpp"
#include "kareus/store/store.hpp"

namespace kareus::planner {

enum class Method { kMegatron, kPerseus, kNanobatchPerseus, kKareus, kKareusExhaustive };
const char* to_string(Method m);
Method parse_method(const std::string& name);  // throws kareus::Error listing the methods
std::vector<Method> default_methods();

struct IterationPoint {
  Seconds time;            // iteration time
  Joules energy;           // whole job
  Joules dynamic_energy;   // whole job
  std::uint32_t plan = 0;  // solver plan index
};

enum class SelectionRule { kMaxThroughput, kDeadline, kEnergyBudget };
const char* to_string(SelectionRule rule);

struct Selection {
  SelectionRule rule = SelectionRule::kMaxThroughput;
  double bound = 0;  // seconds for a deadline, joules for an energy budget
  // Deadline selections only: after the polish, the plan the deadline picks is refined by exact
  // sub-MILPs over windows of instructions, at most this many CBC nodes each
  // (frontier::refine_within_deadline), and replaced when that costs the job less. 0: off; other
  // rules refuse any other value (check_selection).
  int milp_nodes = 0;

  // "max-throughput", "deadline 5.5 s", "energy budget 9000 J".
  std::string describe() const;
  bool operator==(const Selection&) const = default;
};

// What a deadline selection's MILP refinement did (Selection::milp_nodes).
struct SelectionRefinement {
  Selection selection;
  bool improved = false;     // the selection now picks CBC's plan, cheaper than the polished one
  bool time_capped = false;  // CBC stopped at frontier::kRefineSafetySeconds, not the node limit
  double seconds = 0.0;      // wall time (frontier::DeadlineRefinement::seconds)
};

// What turns a solver point (one GPU per stage, static power included) into a whole-job iteration
// point: the workload, and its work outside the pipeline, the gradient reductions after the last
// stage (the tail) and the transfers between stages.
struct JobConversion {
  workload::Workload workload;
  Seconds tail_time{0};
  Joules tail_dynamic_energy{0};
  Joules transfer_dynamic_energy{0};

  IterationPoint point(const frontier::ParetoPoint& pt) const;
};

struct MethodResult {
  Method method = Method::kMegatron;
  // Pareto frontier by increasing time (fastest first).
  std::vector<IterationPoint> frontier;
  // What is needed to turn a point back into a schedule.
  frontier::PipelineProblem problem;
  frontier::PipelineSolverResult solver;
  std::vector<OptionSet> option_sets;  // per (stage, direction): index 2 * stage + (backward)
  std::size_t measurements = 0;        // partition measurements taken + reused
  std::size_t measurements_reused = 0;
  // What obtaining the method's inputs costs on real GPUs, measurements the store answered
  // included (a method's cost does not fall because an earlier run paid it) ...
  double profiling_gpu_hours = 0;
  // ... and the part of it those reused measurements cost when they were taken.
  double profiling_gpu_hours_reused = 0;
  // Kareus methods: each partition key's search result the options were composed from.
  KeyFrontiers key_frontiers;
  // Kept so that a selection made after plan() can turn the plans it polishes into job points
  // (select_polished).
  JobConversion job;
  // The solver's frontier before plan() polished the selection of its options, which a later
  // selection polishes from (a polish is not idempotent: one started from another selection's
  // plans can end elsewhere), so every front end finds the same plan for the same selection.
  frontier::ParetoSet unpolished;
  // The selection plan() polished (PlanOptions::selection), and its MILP refinement when it asked
  // for one.
  Selection polished_for;
  std::optional<SelectionRefinement> refinement;

  const IterationPoint& fastest() const { return frontier.front(); }
  const IterationPoint& min_energy() const;
};

struct Metrics {
  // vs megatron, at each method's fastest point.
  std::optional<double> max_throughput_time_reduction;
  std::optional<double> max_throughput_energy_reduction;
  // vs perseus: deadline = perseus's fastest time, budget = perseus's least energy.
  std::optional<double> iso_time_energy_reduction;
  std::optional<double> iso_energy_time_reduction;
};

// Makes the executor the partition searches of a workload measure on.
using ExecutorFactory =
    std::function<std::unique_ptr<executor::Executor>(const workload::Workload&)>;

// How a front end spells a field in its messages, and the factor from the library's unit to the
// one its user types (1000 for a duration given in milliseconds).
struct FieldSpelling {
  std::string name;
  double scale = 1.0;
};

struct PlanOptions {
  std::vector<Method> methods = default_methods();
  search::Strategy strategy = search::Strategy::kKareus;  // for Method::kKareus
  std::uint64_t seed = 0;
  store::Store* store = nullptr;
  double noise_sigma = 0.0;
  Seconds unit_time = milliseconds(1);
  // Kareus methods only: one clock per instruction (the paper) or per partition, with switches.
  ClockGranularity clock_granularity = ClockGranularity::kInstruction;
  PartitionClockOptions partition_clocks;
  // Called as each method's searches advance and once when each method is done.
  std::function<void(const PlanProgress&)> on_progress;
  // Called as the selection's MILP refinement (Selection::milp_nodes) advances, from the thread
  // that solves the method: methods refine side by side.
  std::function<void(Method, const frontier::RefineProgress&)> on_refine_progress;
  // Called as each method's pipeline solver advances (frontier::PipelineSolverOptions::
  // on_progress), from the thread that solves the method: methods solve side by side.
  std::function<void(Method, const frontier::PipelineSolverProgress&)> on_solver_progress;
  // Empty: default_executor. Scale-out passes one that spreads each batch over MPI ranks.
  ExecutorFactory make_executor;
  // Kareus methods: a measurement cap per partition key, on top of the strategy's own (the search
  // benchmark runs other strategies at the measurements `kareus` took on each key).
  std::map<std::string, std::size_t> key_budgets;
  // Kareus methods: sees every key's search result before composition and may rewrite it (the
  // search benchmark scores a noisy search by the true values of what it measured). The
  // composition then pools the readings across clocks (pooled_readings.hpp).
  std::function<void(Method, KeyFrontiers&)> on_key_frontiers;
  // The plan the front end will select: the solver polishes that plan at the selection's bound
  // (frontier::polish_within), so the selected point can be one the frontier would not have had
  // (never slower than a deadline, nor costlier than the unpolished choice). Every method's fastest
  // point is polished whatever the selection (the max-throughput plan and metric).
  Selection selection;
  // How refusals name the request (PlanRequest::where) and its fields (PlanRequest::spellings).
  std::string where = "plan options";
  std::map<std::string, FieldSpelling> spellings;
};

// The emulator, with the options' noise and seed: what the partition searches measure on unless
// make_executor says otherwise.
std::unique_ptr<executor::Executor> default_executor(const workload::Workload& w,
                                                     const PlanOptions& options);

struct PlanResult {
  workload::Workload workload;
  std::map<Method, MethodResult> methods;
  std::map<Method, Metrics> metrics;
};

PlanResult plan(const workload::Workload& w, const PlanOptions& options);

// The artifact's 10-point sampling (its create_frontier.sh): denser at the fast end; min(10, size)
// points ordered slowest first (the solver's plan order), always including the fastest.
std::vector<IterationPoint> ten_point_frontier(const MethodResult& m);

Metrics compute_metrics(const MethodResult& m, const MethodResult* megatron,
                        const MethodResult* perseus);

// The schedule of one frontier point of `method`, for the runtime (a selected plan's:
// selection.hpp).
Schedule make_schedule(const PlanResult& plan, Method method, const IterationPoint& point);

}  // namespace kareus::planner
