// SPDX-License-Identifier: Apache-2.0
/* The Kareus C API (docs/c-api.md): plan a training job and read its time-energy frontiers, load
 * or export a schedule, enforce it with the frequency controller, measure energy with the monitor.
 *
 * Conventions:
 * - Objects are opaque handles created by kareus_*_create / _load / _parse and released by the
 *   matching kareus_*_free (which accepts NULL).
 * - Every call that can fail returns a kareus_status; on failure kareus_last_error() holds a
 *   message a user can act on (what was wrong, where, what is allowed), for the calling thread,
 *   until its next call into the API. Out parameters are left untouched on failure.
 * - Strings returned as `const char*` belong to the handle and live as long as it does; strings
 *   returned as `char*` belong to the caller and are released with kareus_string_free.
 * - Units are SI with the unit in the name: _s seconds, _j joules, _w watts, _mhz megahertz.
 * - A handle is used by one thread at a time, with one exception: kareus_controller_restore may
 *   be called from any thread while another one drives the controller.
 */
#ifndef KAREUS_KAREUS_H
#define KAREUS_KAREUS_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define KAREUS_API __attribute__((visibility("default")))
#else
#define KAREUS_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Errors ------------------------------------------------------------------------------ */

typedef enum kareus_status {
  KAREUS_OK = 0,
  /* A NULL handle or pointer, an index out of range, an unknown enumerator: a programming error. */
  KAREUS_ERROR_INVALID_ARGUMENT = 1,
  /* Invalid input: a workload, schedule, option or method name that Kareus refuses, a selection
   * no frontier point satisfies, a controller call out of the schedule's order. */
  KAREUS_ERROR_INVALID_INPUT = 2,
  /* The device refused or failed: NVML is unavailable or an NVML call failed, kareusd refused a
   * request, or CUDA failed. */
  KAREUS_ERROR_NVML = 3,
  KAREUS_ERROR_OUT_OF_MEMORY = 4,
  /* A bug in Kareus, or anything else; the message says what. */
  KAREUS_ERROR_INTERNAL = 5,
  /* The file system, the measurement store (SQLite) or the socket to kareusd failed. */
  KAREUS_ERROR_IO = 6,
  /* Widens the type to int so that an unknown value is well defined in C++. */
  KAREUS_STATUS_FORCE_INT = 0x7fffffff
} kareus_status;

/* The message of the calling thread's last failed call, "" after a successful one. */
KAREUS_API const char* kareus_last_error(void);
/* "ok", "invalid argument", ...; "unknown status" for a value outside the enumeration. */
KAREUS_API const char* kareus_status_string(kareus_status status);
/* Releases a string the API returned as `char*`; NULL is ignored. */
KAREUS_API void kareus_string_free(char* text);

/* ---- Planning ---------------------------------------------------------------------------- */

typedef enum kareus_recompute {
  KAREUS_RECOMPUTE_NONE = 0,
  KAREUS_RECOMPUTE_FULL = 1,
  /* Widens the type to int so an unknown value from C is well defined in C++ and rejected. */
  KAREUS_RECOMPUTE_FORCE_INT = 0x7fffffff
} kareus_recompute;

typedef struct kareus_workload {
  const char* model; /* catalogue name (data/models) or the path of a Hugging Face config.json */
  const char* gpu;   /* catalogue GPU name (data/gpus), e.g. "a100-sxm4-40gb" */
  int tp, cp, pp, dp;
  int microbatch_size; /* sequences */
  int sequence_length; /* tokens */
  int microbatches;    /* per iteration per pipeline */
  kareus_recompute recompute;
  int gpus_per_node;
} kareus_workload;

/* The library's defaults: model and gpu NULL (required), every parallel degree 1, ... */
KAREUS_API void kareus_workload_init(kareus_workload* workload);

/* The selection rules: of kareus_plan_options, and of kareus_plan_select after planning. */
typedef enum kareus_selection {
  KAREUS_SELECT_MAX_THROUGHPUT = 0, /* the fastest point; bound ignored */
  KAREUS_SELECT_DEADLINE = 1,       /* least energy with time <= bound (s) */
  KAREUS_SELECT_ENERGY_BUDGET = 2,  /* fastest with energy <= bound (J) */
  /* Widens the type to int so an unknown value from C is well defined in C++ and rejected. */
  KAREUS_SELECT_FORCE_INT = 0x7fffffff
} kareus_selection;

/* Every field of `kareus plan`'s request; kareus_plan_options_init sets the library's defaults.
 * The struct grows at its end as the library gains options: `size` tells the library which
 * fields the caller's struct has, so a program compiled against an older kareus.h keeps working
 * with a newer library. A library refuses a size it does not know
 * (KAREUS_ERROR_INVALID_ARGUMENT), so set it with kareus_plan_options_init, never by hand. */
typedef struct kareus_plan_options {
  size_t size; /* sizeof(kareus_plan_options) as the caller compiled it */
  /* Comma-separated: megatron, perseus, nanobatch-perseus, kareus, kareus-exhaustive.
   * NULL: megatron,perseus,nanobatch-perseus,kareus. */
  const char* methods;
  /* partition search of kareus: "kareus" (NULL), "paper", "random" or "exhaustive" */
  const char* strategy;
  uint64_t seed; /* of every random choice */
  /* SQLite measurement store to resume from and add to; NULL: none, every search measures. */
  const char* store_path;
  double noise_sigma; /* relative measurement noise of the emulator, in [0, 0.5) */
  double unit_time_s; /* time unit of the pipeline solver */
  /* Kareus clocks: "instruction" (NULL: one clock per instruction, the paper) or "partition"
   * (per partition, paying switch_latency_s per clock switch; docs/clock-granularity.md). */
  const char* clock_granularity;
  double switch_latency_s; /* the clock switch latency of "partition" granularity */
  /* The plan kareus_plan_selected returns: `selection` with `bound` (seconds for a deadline,
   * joules for an energy budget) on the kareus method, or the last one planned without kareus.
   * Every method polishes the plan this selection picks, as `kareus plan --deadline` does. */
  kareus_selection selection;
  double bound;
  /* KAREUS_SELECT_DEADLINE only: the selected plans are refined by exact sub-MILPs (CBC), at
   * most this many nodes per window (kareus_plan_select_refined); 0: off. */
  int milp_nodes;
  /* The runtime the selected plan is for: "all" (NULL: every decision applied) or "clocks" (SM
   * clocks only: the best of the methods such a runtime enforces, megatron and perseus). */
  const char* enforceable;
} kareus_plan_options;

/* The library's defaults, and `size`. */
KAREUS_API void kareus_plan_options_init(kareus_plan_options* options);

/* The result of planning: per method, the iteration frontier. */
typedef struct kareus_plan kareus_plan;
typedef struct kareus_schedule kareus_schedule;

/* `options` may be NULL for the defaults. Runs the planner (seconds to minutes for kareus). */
KAREUS_API kareus_status kareus_plan_create(const kareus_workload* workload,
                                            const kareus_plan_options* options, kareus_plan** out);
/* The workload from a JSON file: {"model": ..., "gpu": ..., "parallelism": {"tp": 8, ...}}. */
KAREUS_API kareus_status kareus_plan_create_from_file(const char* workload_path,
                                                      const kareus_plan_options* options,
                                                      kareus_plan** out);
KAREUS_API void kareus_plan_free(kareus_plan* plan);

/* The planned methods, in the planner's order; names as accepted in kareus_plan_options. */
KAREUS_API kareus_status kareus_plan_method_count(const kareus_plan* plan, size_t* count);
KAREUS_API kareus_status kareus_plan_method_name(const kareus_plan* plan, size_t index,
                                                 const char** name);

typedef struct kareus_point {
  double time_s;           /* iteration time */
  double energy_j;         /* whole job, one iteration */
  double dynamic_energy_j; /* whole job, one iteration */
} kareus_point;

/* The method's Pareto frontier by increasing time: point 0 is the fastest. */
KAREUS_API kareus_status kareus_plan_frontier_size(const kareus_plan* plan, const char* method,
                                                   size_t* size);
KAREUS_API kareus_status kareus_plan_frontier_point(const kareus_plan* plan, const char* method,
                                                    size_t index, kareus_point* point);

/* What a deadline selection's MILP refinement did (kareus_plan_select_refined). */
typedef struct kareus_refinement {
  int improved;    /* 1: the selected plan is CBC's, cheaper than the polished one; 0: unchanged */
  int time_capped; /* 1: CBC stopped at its 600 s safety cap, not at the node limit */
  double time_s;   /* wall time of the refinement */
} kareus_refinement;

/* The plan the options selected (their selection and enforceable runtime): its method (a name as
 * in kareus_plan_options, owned by the plan), its point and its refinement. Each out parameter
 * may be NULL; `refinement` is zeroed when the selection asked for none. */
KAREUS_API kareus_status kareus_plan_selected(const kareus_plan* plan, const char** method,
                                              kareus_point* point, kareus_refinement* refinement);
/* The schedule of kareus_plan_selected's plan, as `kareus plan --out` writes schedule.json. */
KAREUS_API kareus_status kareus_plan_selected_schedule(const kareus_plan* plan,
                                                       kareus_schedule** out);
/* summary.json of `kareus plan` (docs/plan.md); release with kareus_string_free. */
KAREUS_API kareus_status kareus_plan_summary(const kareus_plan* plan, char** json);
/* The checked request the plan ran, as JSON with the fields of docs/plan.md's request; release
 * with kareus_string_free. */
KAREUS_API kareus_status kareus_plan_request(const kareus_plan* plan, char** json);

/* Another selection on a method's frontier: the point the rule selects, and, unless `schedule`
 * is NULL, that point's schedule; KAREUS_ERROR_INVALID_INPUT when no point qualifies. The
 * selected plan is polished at the bound first, as `kareus plan --deadline/--energy-budget` does,
 * so the same request gives the same point and schedule as the CLI and Python. The plan is only
 * read: its frontier, and the indices of kareus_plan_frontier_point, stay as planned, and the
 * point selected may be one the frontier does not hold. */
KAREUS_API kareus_status kareus_plan_select(const kareus_plan* plan, const char* method,
                                            kareus_selection rule, double bound,
                                            kareus_point* point, kareus_schedule** schedule);

/* kareus_plan_select; for KAREUS_SELECT_DEADLINE with milp_nodes > 0 the polished plan is then
 * refined by exact sub-MILPs (CBC) over windows of 64 instructions, at most milp_nodes nodes each,
 * and replaced when that is cheaper within the deadline, as `kareus plan --deadline S
 * --milp-nodes N` and Python's select(deadline_s=S, milp_nodes=N) do (the same result every run).
 * milp_nodes 0 is kareus_plan_select. A negative milp_nodes, or a positive one with another rule:
 * KAREUS_ERROR_INVALID_INPUT. `refinement` may be NULL; it is zeroed when milp_nodes is 0. */
KAREUS_API kareus_status kareus_plan_select_refined(const kareus_plan* plan, const char* method,
                                                    kareus_selection rule, double bound,
                                                    int milp_nodes, kareus_point* point,
                                                    kareus_schedule** schedule,
                                                    kareus_refinement* refinement);

/* Relative changes at the paper's comparison points; NAN where a baseline was not planned. */
typedef struct kareus_metrics {
  double max_throughput_time_reduction;   /* vs megatron, fastest points */
  double max_throughput_energy_reduction; /* vs megatron, fastest points */
  double iso_time_energy_reduction;       /* vs perseus, at perseus's fastest time */
  double iso_energy_time_reduction;       /* vs perseus, at perseus's least energy */
} kareus_metrics;

KAREUS_API kareus_status kareus_plan_metrics(const kareus_plan* plan, const char* method,
                                             kareus_metrics* metrics);

/* The schedule of frontier point `index` of `method`, for the runtime. */
KAREUS_API kareus_status kareus_plan_schedule(const kareus_plan* plan, const char* method,
                                              size_t index, kareus_schedule** out);

/* ---- Schedules (docs/schedule-format.md) ------------------------------------------------- */

KAREUS_API kareus_status kareus_schedule_load(const char* path, kareus_schedule** out);
/* `source_name` names the text in error messages; NULL: "schedule". */
KAREUS_API kareus_status kareus_schedule_parse(const char* json, const char* source_name,
                                               kareus_schedule** out);
KAREUS_API void kareus_schedule_free(kareus_schedule* schedule);
/* The JSON document; release with kareus_string_free. */
KAREUS_API kareus_status kareus_schedule_to_json(const kareus_schedule* schedule, char** json);

typedef struct kareus_schedule_info {
  const char* method; /* kareus | perseus | nanobatch-perseus | megatron */
  const char* gpu;
  double iteration_time_s; /* predicted */
  double energy_j;         /* predicted */
  double dynamic_energy_j; /* predicted */
  int stage_count;
} kareus_schedule_info;

KAREUS_API kareus_status kareus_schedule_get_info(const kareus_schedule* schedule,
                                                  kareus_schedule_info* info);
KAREUS_API kareus_status kareus_schedule_instruction_count(const kareus_schedule* schedule,
                                                           int stage, size_t* count);

typedef struct kareus_instruction {
  int microbatch;
  const char* direction; /* "forward" | "backward" */
  double clock_mhz;
  const char* execution;            /* "sequential" | "nanobatch" */
  size_t partition_count;           /* communication kernels launched */
  size_t recompute_partition_count; /* ... in the recomputed forward of a backward */
} kareus_instruction;

/* Instruction `index` of `stage` in execution order. */
KAREUS_API kareus_status kareus_schedule_instruction(const kareus_schedule* schedule, int stage,
                                                     size_t index, kareus_instruction* out);

typedef struct kareus_partition_launch {
  const char* partition; /* fwd_attn, fwd_mlp, bwd_attn, ... */
  const char* slot;      /* launch slot of the communication kernel, e.g. "norm_0" */
  int sms;               /* SMs it occupies */
} kareus_partition_launch;

/* Launch `k` (in partition-name order) of an instruction; `recompute` nonzero selects the
 * recomputed forward's launches. */
KAREUS_API kareus_status kareus_schedule_partition(const kareus_schedule* schedule, int stage,
                                                   size_t index, int recompute, size_t k,
                                                   kareus_partition_launch* out);

/* ---- Frequency controller (docs/runtime.md) ---------------------------------------------- */

typedef struct kareus_controller kareus_controller;

typedef struct kareus_controller_options {
  unsigned gpu; /* NVML index of the stage's GPU */
  /* kareusd's socket; NULL: NVML in this process (needs the right to set clocks). */
  const char* daemon_socket;
  /* Nonzero: reset the clocks on SIGINT, SIGTERM, SIGHUP, SIGQUIT or SIGPIPE (each unless
     ignored), then pass the signal on. */
  int restore_on_signals;
  /* Checked against the schedule before the first clock change; 0: not checked. */
  int pipeline_stages;
  int microbatches;
  /* Nonzero (the default): the schedule's GPU model must be the one NVML reports. */
  int check_gpu_model;
  /* Nonzero: a schedule with step_clocks_mhz is applied, the program reporting every step with
   * kareus_controller_instruction_step; zero (the default): such a schedule is refused. */
  int partition_clocks;
  /* Nonzero: lock the memory clock at its maximum until the clocks are restored (NVML only). */
  int lock_memory_clock;
  /* Non-NULL: write a measurement record of every instruction and iteration to this file
   * (docs/measurement-format.md); "{rank}" in it becomes `rank`. The file must not exist or be
   * empty. NULL (the default): no record. */
  const char* record_path;
  int rank;
} kareus_controller_options;

KAREUS_API void kareus_controller_options_init(kareus_controller_options* options);

/* Checks the job shape, the GPU model and every clock of `stage` against the GPU before any
 * clock changes. `options` may be NULL. The
 * schedule is copied: it may be freed afterwards. */
KAREUS_API kareus_status kareus_controller_create(const kareus_schedule* schedule, int stage,
                                                  const kareus_controller_options* options,
                                                  kareus_controller** out);
/* Drops queued clock changes and restores the GPU's default clocks. */
KAREUS_API void kareus_controller_free(kareus_controller* controller);

/* Before each forward or backward: must be the stage's next instruction. Does not wait for NVML;
 * a failed earlier clock change is reported here. */
KAREUS_API kareus_status kareus_controller_instruction_begin(kareus_controller* controller,
                                                             int stage, int microbatch,
                                                             const char* direction);
/* Step `step` (0, 1, ... in order) of the current instruction begins (partition_clocks only);
 * its clock from step_clocks_mhz is queued when it differs from the previous one. */
KAREUS_API kareus_status kareus_controller_instruction_step(kareus_controller* controller,
                                                            int step);
/* The current instruction ends (optional): with a record, its span ends here rather than where
 * the next instruction begins, so waits between instructions are left out of it. */
KAREUS_API kareus_status kareus_controller_instruction_end(kareus_controller* controller);
/* End of an iteration: every instruction must have run; the schedule starts over. */
KAREUS_API kareus_status kareus_controller_step_end(kareus_controller* controller);
/* Blocks until every queued clock change reached the GPU. */
KAREUS_API kareus_status kareus_controller_wait(kareus_controller* controller);
/* Drops queued changes and resets the GPU's clocks; later instruction calls fail. Idempotent. */
KAREUS_API kareus_status kareus_controller_restore(kareus_controller* controller);

typedef struct kareus_controller_stats {
  size_t instructions;  /* instruction calls accepted */
  size_t clock_changes; /* clocks handed to the GPU */
  size_t skipped;       /* same clock as the previous instruction: no call */
} kareus_controller_stats;

KAREUS_API kareus_status kareus_controller_get_stats(const kareus_controller* controller,
                                                     kareus_controller_stats* stats);

/* ---- Energy monitor (docs/runtime.md) ---------------------------------------------------- */

typedef struct kareus_monitor kareus_monitor;

typedef struct kareus_monitor_options {
  /* Power sampling period for GPUs without an energy counter. */
  double power_sample_interval_s;
} kareus_monitor_options;

KAREUS_API void kareus_monitor_options_init(kareus_monitor_options* options);

/* Measures the NVML GPUs gpus[0..gpu_count). `options` may be NULL. */
KAREUS_API kareus_status kareus_monitor_create(const unsigned* gpus, size_t gpu_count,
                                               const kareus_monitor_options* options,
                                               kareus_monitor** out);
KAREUS_API void kareus_monitor_free(kareus_monitor* monitor);

/* Windows are named; they may nest and overlap. */
KAREUS_API kareus_status kareus_monitor_begin_window(kareus_monitor* monitor, const char* name);

typedef struct kareus_measurement {
  double time_s;
  double total_energy_j; /* over the monitor's GPUs */
} kareus_measurement;

/* Closes the window. `gpu_energy_j`, when not NULL, receives each GPU's energy in the order the
 * GPUs were given and must hold `gpu_energy_capacity` >= gpu_count values. */
KAREUS_API kareus_status kareus_monitor_end_window(kareus_monitor* monitor, const char* name,
                                                   kareus_measurement* measurement,
                                                   double* gpu_energy_j,
                                                   size_t gpu_energy_capacity);

#ifdef __cplusplus
}
#endif

#endif /* KAREUS_KAREUS_H */
