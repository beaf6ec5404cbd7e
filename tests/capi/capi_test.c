// SPDX-License-Identifier: Apache-2.0
/* The C API from a C program (compiled as C11): planning, schedules, the frequency controller
 * and the energy monitor against the fake NVML. GoogleTest needs C++, so this program carries
 * its own CHECK macros; each test function returns 0 on success, and main reports each by name.
 *
 * Environment (set by ctest): KAREUS_NVML_LIBRARY (libfake_nvml.so), KAREUS_FAKE_NVML_SCRIPT
 * (tests/data/nvml/two_gpus.json), KAREUS_TEST_DATA_DIR (tests/data), KAREUS_DATA_DIR (data/).
 * The program points KAREUS_FAKE_NVML_LOG at a temporary file of its own. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kareus/kareus.h"

#define CHECK(cond)                                                                           \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond, \
              kareus_last_error());                                                           \
      return 1;                                                                               \
    }                                                                                         \
  } while (0)

#define CHECK_OK(call) CHECK((call) == KAREUS_OK)
#define CHECK_STATUS(call, status) CHECK((call) == (status))
#define CHECK_ERROR_MENTIONS(text) CHECK(strstr(kareus_last_error(), (text)) != NULL)

static char log_path[256];
static char schedule_path[512];

/* ---- the fake NVML's log ---------------------------------------------------------------- */

#define MAX_LINES 256

typedef struct {
  char lines[MAX_LINES][64];
  int count;
} lines_t;

static void clear_log(void) {
  unlink(log_path);
}

static void read_log(lines_t* out) {
  out->count = 0;
  FILE* f = fopen(log_path, "r");
  if (!f) return;
  while (out->count < MAX_LINES && fgets(out->lines[out->count], 64, f)) {
    out->lines[out->count][strcspn(out->lines[out->count], "\n")] = '\0';
    ++out->count;
  }
  fclose(f);
}

static void add_line(lines_t* l, const char* line) {
  if (l->count < MAX_LINES) snprintf(l->lines[l->count++], 64, "%s", line);
}

/* What the controller must leave in the log for `iterations` of `stage`: one setter per clock
 * that differs from the previous instruction's, then one reset, read from the schedule. */
static int expected_log(const kareus_schedule* s, int stage, int iterations, unsigned gpu,
                        lines_t* out) {
  size_t count = 0;
  double last = -1;
  char line[64];
  out->count = 0;
  CHECK_OK(kareus_schedule_instruction_count(s, stage, &count));
  for (int it = 0; it < iterations; ++it) {
    for (size_t i = 0; i < count; ++i) {
      kareus_instruction ins;
      CHECK_OK(kareus_schedule_instruction(s, stage, i, &ins));
      if (ins.clock_mhz != last) {
        snprintf(line, sizeof line, "nvmlDeviceSetGpuLockedClocks %u %.0f %.0f", gpu, ins.clock_mhz,
                 ins.clock_mhz);
        add_line(out, line);
      }
      last = ins.clock_mhz;
    }
  }
  snprintf(line, sizeof line, "nvmlDeviceResetGpuLockedClocks %u", gpu);
  add_line(out, line);
  return 0;
}

static int same_lines(const lines_t* a, const lines_t* b) {
  if (a->count != b->count) return 0;
  for (int i = 0; i < a->count; ++i)
    if (strcmp(a->lines[i], b->lines[i]) != 0) return 0;
  return 1;
}

/* Plays `iterations` of `stage` in schedule order, as a training loop would. */
static int play(kareus_controller* c, const kareus_schedule* s, int stage, int iterations) {
  size_t count = 0;
  CHECK_OK(kareus_schedule_instruction_count(s, stage, &count));
  for (int it = 0; it < iterations; ++it) {
    for (size_t i = 0; i < count; ++i) {
      kareus_instruction ins;
      CHECK_OK(kareus_schedule_instruction(s, stage, i, &ins));
      CHECK_OK(kareus_controller_instruction_begin(c, stage, ins.microbatch, ins.direction));
    }
    CHECK_OK(kareus_controller_step_end(c));
  }
  return 0;
}

/* ---- tests ------------------------------------------------------------------------------- */

static int test_errors(void) {
  kareus_schedule* s = NULL;
  CHECK(strcmp(kareus_status_string(KAREUS_OK), "ok") == 0);
  CHECK(strcmp(kareus_status_string(KAREUS_ERROR_NVML), "NVML error") == 0);
  CHECK(strcmp(kareus_status_string((kareus_status)99), "unknown status") == 0);

  CHECK_STATUS(kareus_schedule_load(schedule_path, NULL), KAREUS_ERROR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("out is NULL");
  CHECK_STATUS(kareus_schedule_load("/nonexistent/plan.json", &s), KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS("/nonexistent/plan.json");
  CHECK(s == NULL); /* untouched on failure */
  CHECK_STATUS(kareus_schedule_parse("{\"format_version\": 1}", "inline", &s),
               KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS("inline");
  CHECK_STATUS(kareus_schedule_parse("{not json", NULL, &s), KAREUS_ERROR_INVALID_INPUT);
  CHECK(s == NULL);

  /* A successful call clears the message. */
  CHECK_OK(kareus_schedule_load(schedule_path, &s));
  CHECK(strcmp(kareus_last_error(), "") == 0);
  kareus_schedule_free(s);
  kareus_schedule_free(NULL);
  kareus_string_free(NULL);
  return 0;
}

static int test_workload_errors(void) {
  kareus_workload w;
  kareus_plan* plan = NULL;
  kareus_workload_init(&w);
  CHECK(w.tp == 1 && w.pp == 1 && w.microbatches >= 1 && w.model == NULL);
  CHECK_STATUS(kareus_plan_create(&w, NULL, &plan), KAREUS_ERROR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("workload->model");

  w.model = "no-such-model";
  w.gpu = "a100-sxm4-40gb";
  CHECK_STATUS(kareus_plan_create(&w, NULL, &plan), KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS("no-such-model");

  w.model = "qwen3-1.7b";
  w.tp = 5; /* does not divide the heads */
  CHECK_STATUS(kareus_plan_create(&w, NULL, &plan), KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS("tp");

  kareus_plan_options o;
  kareus_plan_options_init(&o);
  w.tp = 1;
  o.methods = "megatron,warp-speed";
  CHECK_STATUS(kareus_plan_create(&w, &o, &plan), KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS("warp-speed");
  o.methods = "megatron";
  o.noise_sigma = 0.7;
  CHECK_STATUS(kareus_plan_create(&w, &o, &plan), KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS("noise_sigma");
  CHECK(plan == NULL);
  /* The library's messages name this API's fields, never a command-line flag. */
  o.noise_sigma = 0;
  o.methods = "kareus";
  const int microbatch_size = w.microbatch_size;
  w.microbatch_size = 3;
  CHECK_STATUS(kareus_plan_create(&w, &o, &plan), KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS(
      "set microbatch_size to an even number, or plan only methods megatron,perseus");
  CHECK(strstr(kareus_last_error(), "--") == NULL);
  w.microbatch_size = microbatch_size;
  o.methods = "megatron";
  /* A struct of a size this library does not know is refused before it is read. */
  o.noise_sigma = 0;
  o.size = sizeof o + 8;
  CHECK_STATUS(kareus_plan_create(&w, &o, &plan), KAREUS_ERROR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("kareus_plan_options_init");
  kareus_plan_options_init(&o);
  CHECK(o.size == sizeof o);
  /* A store that cannot be created is an I/O failure, not a bad workload. */
  o.methods = "megatron";
  o.store_path = "/proc/kareus-no-such-folder/measurements.sqlite";
  CHECK_STATUS(kareus_plan_create(&w, &o, &plan), KAREUS_ERROR_IO);
  CHECK_ERROR_MENTIONS("measurement store");
  CHECK(strcmp(kareus_status_string(KAREUS_ERROR_IO), "I/O error") == 0);
  CHECK(plan == NULL);
  return 0;
}

/* A workload file plans like the same workload given as a struct. */
static int test_plan_from_file(void) {
  char path[300];
  snprintf(path, sizeof path, "%s.workload.json", log_path);
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  fputs(
      "{\"model\": \"qwen3-1.7b\", \"gpu\": \"a100-sxm4-40gb\", \"parallelism\": "
      "{\"pp\": 2, \"microbatch_size\": 1, \"sequence_length\": 2048, \"microbatches\": 4}}",
      f);
  fclose(f);
  kareus_plan_options o;
  kareus_plan_options_init(&o);
  o.methods = "megatron";
  kareus_plan *from_file = NULL, *from_struct = NULL;
  const kareus_status status = kareus_plan_create_from_file(path, &o, &from_file);
  unlink(path);
  CHECK_OK(status);
  kareus_workload w;
  kareus_workload_init(&w);
  w.model = "qwen3-1.7b";
  w.gpu = "a100-sxm4-40gb";
  w.pp = 2;
  w.microbatches = 4;
  CHECK_OK(kareus_plan_create(&w, &o, &from_struct));
  size_t n = 0, m = 0;
  CHECK_OK(kareus_plan_frontier_size(from_file, "megatron", &n));
  CHECK_OK(kareus_plan_frontier_size(from_struct, "megatron", &m));
  CHECK(n == m && n >= 1);
  kareus_point a, b;
  CHECK_OK(kareus_plan_frontier_point(from_file, "megatron", 0, &a));
  CHECK_OK(kareus_plan_frontier_point(from_struct, "megatron", 0, &b));
  CHECK(a.time_s == b.time_s && a.energy_j == b.energy_j);
  kareus_plan_free(from_file);
  kareus_plan_free(from_struct);
  CHECK_STATUS(kareus_plan_create_from_file(path, &o, &from_file), KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS(path);
  return 0;
}

/* Plans a small job with the two fast methods, checks the frontiers and the selection rules,
 * then enforces the planned schedule on the fake A100 and finds its clocks in the log. */
static int test_plan_to_controller(void) {
  kareus_workload w;
  kareus_plan_options o;
  kareus_plan* plan = NULL;
  kareus_workload_init(&w);
  w.model = "qwen3-1.7b";
  w.gpu = "a100-sxm4-40gb";
  w.pp = 2;
  w.microbatches = 4;
  w.sequence_length = 2048;
  kareus_plan_options_init(&o);
  o.methods = "megatron,perseus";
  CHECK_OK(kareus_plan_create(&w, &o, &plan));

  size_t methods = 0;
  const char* name = NULL;
  CHECK_OK(kareus_plan_method_count(plan, &methods));
  CHECK(methods == 2);
  CHECK_OK(kareus_plan_method_name(plan, 1, &name));
  CHECK(strcmp(name, "perseus") == 0 || strcmp(name, "megatron") == 0);
  CHECK_STATUS(kareus_plan_method_name(plan, 2, &name), KAREUS_ERROR_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("out of range");

  size_t n = 0;
  CHECK_OK(kareus_plan_frontier_size(plan, "perseus", &n));
  CHECK(n >= 2);
  kareus_point prev, p;
  CHECK_OK(kareus_plan_frontier_point(plan, "perseus", 0, &prev));
  for (size_t i = 1; i < n; ++i) {
    CHECK_OK(kareus_plan_frontier_point(plan, "perseus", i, &p));
    CHECK(p.time_s > prev.time_s);     /* fastest first */
    CHECK(p.energy_j < prev.energy_j); /* Pareto: slower only if cheaper */
    prev = p;
  }
  CHECK_STATUS(kareus_plan_frontier_size(plan, "kareus", &n), KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS("kareus");

  /* Selection against a brute-force scan of the frontier. */
  kareus_point fastest, slowest, chosen;
  size_t size = 0;
  CHECK_OK(kareus_plan_frontier_size(plan, "perseus", &size));
  CHECK_OK(kareus_plan_frontier_point(plan, "perseus", 0, &fastest));
  CHECK_OK(kareus_plan_frontier_point(plan, "perseus", size - 1, &slowest));
  CHECK_OK(kareus_plan_select(plan, "perseus", KAREUS_SELECT_MAX_THROUGHPUT, 0, &chosen, NULL));
  CHECK(chosen.time_s == fastest.time_s && chosen.energy_j == fastest.energy_j);
  const double deadline = 0.5 * (fastest.time_s + slowest.time_s);
  kareus_schedule* s = NULL;
  CHECK_OK(kareus_plan_select(plan, "perseus", KAREUS_SELECT_DEADLINE, deadline, &chosen, &s));
  /* The selection polished its plan on its own: the frontier is as planned, and the point within
   * the deadline and never costlier than the frontier's best there. */
  size_t after = 0;
  CHECK_OK(kareus_plan_frontier_size(plan, "perseus", &after));
  CHECK(after == size);
  double least = INFINITY;
  for (size_t i = 0; i < size; ++i) {
    CHECK_OK(kareus_plan_frontier_point(plan, "perseus", i, &p));
    if (p.time_s <= deadline && p.energy_j < least) least = p.energy_j;
  }
  CHECK(chosen.time_s <= deadline && chosen.energy_j <= least);
  CHECK_STATUS(kareus_plan_select(plan, "perseus", KAREUS_SELECT_ENERGY_BUDGET,
                                  0.5 * slowest.energy_j, &chosen, NULL),
               KAREUS_ERROR_INVALID_INPUT);
  CHECK_STATUS(kareus_plan_select(plan, "perseus", (kareus_selection)7, 0, &chosen, NULL),
               KAREUS_ERROR_INVALID_ARGUMENT);

  /* The options' own selection (max-throughput) on the last method planned without kareus. */
  const char* selected_method = NULL;
  kareus_refinement refinement = {1, 1, 1.0};
  CHECK_OK(kareus_plan_selected(plan, &selected_method, &p, &refinement));
  CHECK(strcmp(selected_method, "perseus") == 0);
  CHECK(p.time_s == fastest.time_s && p.energy_j == fastest.energy_j);
  CHECK(refinement.improved == 0 && refinement.time_capped == 0 && refinement.time_s == 0);
  char* summary = NULL;
  CHECK_OK(kareus_plan_summary(plan, &summary));
  CHECK(strstr(summary, "\"provenance\"") != NULL && strstr(summary, "\"selected\"") != NULL);
  kareus_string_free(summary);

  kareus_metrics m;
  CHECK_OK(kareus_plan_metrics(plan, "perseus", &m));
  CHECK(!isnan(m.max_throughput_energy_reduction)); /* megatron was planned */

  /* The schedule of the selected point: one stage per pipeline stage, 2 x microbatches each,
   * and its JSON survives a round trip. */
  kareus_plan_free(plan);
  kareus_schedule_info info;
  CHECK_OK(kareus_schedule_get_info(s, &info));
  CHECK(strcmp(info.method, "perseus") == 0);
  CHECK(info.iteration_time_s == chosen.time_s && info.energy_j == chosen.energy_j);
  CHECK(info.stage_count == 2);
  size_t count = 0;
  CHECK_OK(kareus_schedule_instruction_count(s, 1, &count));
  CHECK(count == 8);
  char* json = NULL;
  CHECK_OK(kareus_schedule_to_json(s, &json));
  kareus_schedule* back = NULL;
  CHECK_OK(kareus_schedule_parse(json, "round trip", &back));
  char* json_back = NULL;
  CHECK_OK(kareus_schedule_to_json(back, &json_back));
  CHECK(strcmp(json, json_back) == 0);
  kareus_string_free(json);
  kareus_string_free(json_back);
  kareus_schedule_free(back);

  /* The planned clocks are A100 clocks: the fake A100 (GPU 0) accepts them. */
  clear_log();
  kareus_controller* c = NULL;
  CHECK_OK(kareus_controller_create(s, 1, NULL, &c));
  CHECK(play(c, s, 1, 2) == 0);
  CHECK_OK(kareus_controller_wait(c));
  kareus_controller_free(c);
  lines_t got, want;
  read_log(&got);
  CHECK(expected_log(s, 1, 2, 0, &want) == 0);
  CHECK(same_lines(&got, &want));
  kareus_schedule_free(s);
  return 0;
}

static int test_schedule_fixture(void) {
  kareus_schedule* s = NULL;
  CHECK_OK(kareus_schedule_load(schedule_path, &s));
  kareus_schedule_info info;
  CHECK_OK(kareus_schedule_get_info(s, &info));
  CHECK(strcmp(info.method, "kareus") == 0);
  CHECK(strcmp(info.gpu, "NVIDIA A100-SXM4-40GB") == 0);
  CHECK(info.iteration_time_s == 2.75 && info.energy_j == 9800.5);
  CHECK(info.stage_count == 2);

  /* Stage 0, third instruction: B0 at 900 MHz with its launches (tests/data/runtime). */
  kareus_instruction ins;
  CHECK_OK(kareus_schedule_instruction(s, 0, 2, &ins));
  CHECK(ins.microbatch == 0 && strcmp(ins.direction, "backward") == 0);
  CHECK(ins.clock_mhz == 900 && strcmp(ins.execution, "nanobatch") == 0);
  CHECK(ins.partition_count == 2 && ins.recompute_partition_count == 2);
  kareus_partition_launch l;
  CHECK_OK(kareus_schedule_partition(s, 0, 2, 0, 0, &l));
  CHECK(strcmp(l.partition, "bwd_attn") == 0 && strcmp(l.slot, "rope_0") == 0 && l.sms == 30);
  CHECK_OK(kareus_schedule_partition(s, 0, 2, 1, 0, &l));
  CHECK(strcmp(l.partition, "fwd_attn") == 0 && strcmp(l.slot, "attn_0") == 0 && l.sms == 21);
  CHECK_STATUS(kareus_schedule_partition(s, 0, 2, 1, 2, &l), KAREUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(kareus_schedule_instruction(s, 0, 6, &ins), KAREUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(kareus_schedule_instruction(s, 2, 0, &ins), KAREUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(kareus_schedule_instruction(s, -1, 0, &ins), KAREUS_ERROR_INVALID_ARGUMENT);
  kareus_schedule_free(s);
  return 0;
}

/* One microbatch at 1405 MHz, between two of the A100's 15 MHz steps. */
static const char* const odd_clock_schedule =
    "{\"format_version\": 1, \"workload\": {}, \"method\": \"perseus\", \"gpu\": \"A100\",\n"
    " \"predicted\": {\"iteration_time_s\": 1, \"energy_j\": 1, \"dynamic_energy_j\": 1},\n"
    " \"stages\": [{\"stage\": 0, \"instructions\": [\n"
    "  {\"microbatch\": 0, \"direction\": \"forward\", \"clock_mhz\": 1405,\n"
    "   \"execution\": \"sequential\"},\n"
    "  {\"microbatch\": 0, \"direction\": \"backward\", \"clock_mhz\": 1410,\n"
    "   \"execution\": \"sequential\"}]}]}";

static int test_controller(void) {
  kareus_schedule* s = NULL;
  kareus_controller* c = NULL;
  kareus_controller_options o;
  CHECK_OK(kareus_schedule_load(schedule_path, &s));
  kareus_controller_options_init(&o);
  CHECK(o.gpu == 0 && o.daemon_socket == NULL && o.restore_on_signals != 0);

  clear_log();
  CHECK_OK(kareus_controller_create(s, 0, &o, &c));
  CHECK(play(c, s, 0, 2) == 0);
  CHECK_OK(kareus_controller_wait(c));
  kareus_controller_stats st;
  CHECK_OK(kareus_controller_get_stats(c, &st));
  /* Stage 0 runs 930 930 900 1020 900 1410: five changes per iteration, one skip; the second
   * iteration starts at 930 after 1410, so it changes too. */
  CHECK(st.instructions == 12 && st.clock_changes == 10 && st.skipped == 2);

  /* Out of order: the schedule expects F0 of the next iteration. */
  CHECK_STATUS(kareus_controller_instruction_begin(c, 0, 1, "backward"),
               KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS("backward");
  CHECK_STATUS(kareus_controller_instruction_begin(c, 0, 0, NULL), KAREUS_ERROR_INVALID_ARGUMENT);
  kareus_controller_free(c);
  lines_t got, want;
  read_log(&got);
  CHECK(expected_log(s, 0, 2, 0, &want) == 0);
  CHECK(want.count == 11);
  CHECK(same_lines(&got, &want));

  /* After restore the GPU is reset once and later calls are refused. */
  clear_log();
  CHECK_OK(kareus_controller_create(s, 1, &o, &c));
  CHECK_OK(kareus_controller_instruction_begin(c, 1, 0, "forward"));
  CHECK_OK(kareus_controller_wait(c));
  CHECK_OK(kareus_controller_restore(c));
  CHECK_OK(kareus_controller_restore(c));
  CHECK_STATUS(kareus_controller_instruction_begin(c, 1, 0, "backward"),
               KAREUS_ERROR_INVALID_INPUT);
  kareus_controller_free(c);
  read_log(&got);
  CHECK(got.count == 2);
  CHECK(strcmp(got.lines[0], "nvmlDeviceSetGpuLockedClocks 0 1200 1200") == 0);
  CHECK(strcmp(got.lines[1], "nvmlDeviceResetGpuLockedClocks 0") == 0);

  /* A stage the schedule lacks; a clock the GPU does not list (the fake A100 steps by 15 MHz). */
  CHECK_STATUS(kareus_controller_create(s, 2, &o, &c), KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS("stage");
  kareus_schedule_free(s);
  CHECK_OK(kareus_schedule_parse(odd_clock_schedule, "odd clock", &s));
  c = NULL;
  CHECK_STATUS(kareus_controller_create(s, 0, &o, &c), KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS("1405 MHz");
  CHECK(c == NULL);
  /* No kareusd behind the socket: the socket failed, an I/O error, not bad input. */
  o.daemon_socket = "/nonexistent/kareusd.sock";
  CHECK_STATUS(kareus_controller_create(s, 0, &o, &c), KAREUS_ERROR_IO);
  CHECK_ERROR_MENTIONS("cannot connect to kareusd");
  CHECK(c == NULL);
  kareus_controller_free(NULL);
  kareus_schedule_free(s);
  return 0;
}

/* One microbatch whose forward changes clock between its steps (kareus plan
 * --clock-granularity partition). */
static const char* const step_clock_schedule =
    "{\"format_version\": 1, \"workload\": {}, \"method\": \"kareus\", \"gpu\": "
    "\"a100-sxm4-40gb\",\n"
    " \"predicted\": {\"iteration_time_s\": 1, \"energy_j\": 1, \"dynamic_energy_j\": 1},\n"
    " \"stages\": [{\"stage\": 0, \"instructions\": [\n"
    "  {\"microbatch\": 0, \"direction\": \"forward\", \"clock_mhz\": 1200,\n"
    "   \"execution\": \"nanobatch\", \"step_clocks_mhz\": [1200, 990, 990],\n"
    "   \"partitions\": {\"fwd_attn\": {\"slot\": \"norm_0\", \"sms\": 12}}},\n"
    "  {\"microbatch\": 0, \"direction\": \"backward\", \"clock_mhz\": 1410,\n"
    "   \"execution\": \"sequential\"}]}]}";

static int test_checks_and_step_clocks(void) {
  kareus_schedule* s = NULL;
  kareus_controller* c = NULL;
  kareus_controller_options o;
  kareus_controller_options_init(&o);
  CHECK(o.check_gpu_model != 0 && o.partition_clocks == 0);
  CHECK(o.pipeline_stages == 0 && o.microbatches == 0);
  CHECK_OK(kareus_schedule_parse(step_clock_schedule, "steps", &s));

  clear_log();
  CHECK_STATUS(kareus_controller_create(s, 0, &o, &c), KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS("step_clocks_mhz");
  o.partition_clocks = 1;
  o.microbatches = 4;
  o.pipeline_stages = 2;
  CHECK_STATUS(kareus_controller_create(s, 0, &o, &c), KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS("1 pipeline stage(s), the job runs 2");
  CHECK_ERROR_MENTIONS("1 microbatch(es) per iteration, the job 4");
  o.gpu = 1; /* the fake RTX 3080 Ti */
  o.microbatches = 1;
  o.pipeline_stages = 1;
  CHECK_STATUS(kareus_controller_create(s, 0, &o, &c), KAREUS_ERROR_INVALID_INPUT);
  CHECK_ERROR_MENTIONS("this GPU is NVIDIA GeForce RTX 3080 Ti");
  lines_t got;
  read_log(&got);
  CHECK(got.count == 0);

  o.gpu = 0;
  CHECK_OK(kareus_controller_create(s, 0, &o, &c));
  CHECK_OK(kareus_controller_instruction_begin(c, 0, 0, "forward"));
  for (int step = 0; step < 3; ++step) CHECK_OK(kareus_controller_instruction_step(c, step));
  CHECK_STATUS(kareus_controller_instruction_step(c, 3), KAREUS_ERROR_INVALID_INPUT);
  CHECK_OK(kareus_controller_instruction_begin(c, 0, 0, "backward"));
  CHECK_OK(kareus_controller_wait(c));
  kareus_controller_free(c);
  read_log(&got);
  CHECK(got.count == 4);
  CHECK(strcmp(got.lines[0], "nvmlDeviceSetGpuLockedClocks 0 1200 1200") == 0);
  CHECK(strcmp(got.lines[1], "nvmlDeviceSetGpuLockedClocks 0 990 990") == 0);
  CHECK(strcmp(got.lines[2], "nvmlDeviceSetGpuLockedClocks 0 1410 1410") == 0);
  CHECK(strcmp(got.lines[3], "nvmlDeviceResetGpuLockedClocks 0") == 0);
  kareus_schedule_free(s);
  return 0;
}

static int test_nvml_unavailable(void) {
  kareus_schedule* s = NULL;
  kareus_controller* c = NULL;
  kareus_monitor* m = NULL;
  const unsigned gpu = 0;
  char* saved = strdup(getenv("KAREUS_NVML_LIBRARY"));
  CHECK_OK(kareus_schedule_load(schedule_path, &s));
  setenv("KAREUS_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  const kareus_status controller = kareus_controller_create(s, 0, NULL, &c);
  const int mentions = strstr(kareus_last_error(), "NVML unavailable") != NULL;
  const kareus_status monitor = kareus_monitor_create(&gpu, 1, NULL, &m);
  setenv("KAREUS_NVML_LIBRARY", saved, 1);
  free(saved);
  kareus_schedule_free(s);
  CHECK(controller == KAREUS_ERROR_NVML && mentions);
  CHECK(monitor == KAREUS_ERROR_NVML);
  return 0;
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static int test_monitor(void) {
  const unsigned gpus[2] = {0, 1};
  kareus_monitor* m = NULL;
  kareus_monitor_options o;
  kareus_monitor_options_init(&o);
  CHECK(o.power_sample_interval_s > 0);
  CHECK_STATUS(kareus_monitor_create(NULL, 2, &o, &m), KAREUS_ERROR_INVALID_ARGUMENT);
  CHECK_OK(kareus_monitor_create(gpus, 2, &o, &m));

  CHECK_OK(kareus_monitor_begin_window(m, "outer"));
  CHECK_OK(kareus_monitor_begin_window(m, "inner"));
  CHECK_STATUS(kareus_monitor_begin_window(m, "inner"), KAREUS_ERROR_INVALID_INPUT);
  sleep_ms(60);
  kareus_measurement inner, outer;
  double energy[2] = {0, 0}, too_small[1];
  CHECK_STATUS(kareus_monitor_end_window(m, "inner", &inner, too_small, 1),
               KAREUS_ERROR_INVALID_ARGUMENT);
  CHECK_OK(kareus_monitor_end_window(m, "inner", &inner, energy, 2));
  sleep_ms(20);
  CHECK_OK(kareus_monitor_end_window(m, "outer", &outer, NULL, 0));
  CHECK_STATUS(kareus_monitor_end_window(m, "inner", &inner, NULL, 0), KAREUS_ERROR_INVALID_INPUT);
  kareus_monitor_free(m);

  /* The fake draws idle_w + w_per_mhz x clock at the default clocks (two_gpus.json):
   * 52 + 0.25 x 1410 = 404.5 W and 22 + 0.15 x 1665 = 271.75 W. */
  CHECK(inner.time_s >= 0.06 && outer.time_s > inner.time_s);
  CHECK(fabs(energy[0] + energy[1] - inner.total_energy_j) < 1e-9);
  CHECK(fabs(energy[0] / inner.time_s - 404.5) < 0.05 * 404.5);
  CHECK(fabs(energy[1] / inner.time_s - 271.75) < 0.05 * 271.75);
  CHECK(outer.total_energy_j > inner.total_energy_j);
  return 0;
}

/* record_path: one line per instruction (its end reported), per iteration, and the end line;
 * "{rank}" in the path becomes co.rank. */
static int test_record(void) {
  kareus_schedule* s = NULL;
  kareus_controller* c = NULL;
  kareus_controller_options o;
  char pattern[300], path[300];
  snprintf(pattern, sizeof pattern, "%s.{rank}.jsonl", log_path);
  snprintf(path, sizeof path, "%s.4.jsonl", log_path);
  unlink(path);
  CHECK_OK(kareus_schedule_load(schedule_path, &s));
  kareus_controller_options_init(&o);
  CHECK(o.record_path == NULL);
  o.record_path = pattern;
  o.rank = 4;
  CHECK_OK(kareus_controller_create(s, 0, &o, &c));
  size_t count = 0;
  CHECK_OK(kareus_schedule_instruction_count(s, 0, &count));
  for (size_t i = 0; i < count; ++i) {
    kareus_instruction ins;
    CHECK_OK(kareus_schedule_instruction(s, 0, i, &ins));
    CHECK_OK(kareus_controller_instruction_begin(c, 0, ins.microbatch, ins.direction));
    CHECK_OK(kareus_controller_instruction_end(c));
  }
  CHECK_STATUS(kareus_controller_instruction_end(c), KAREUS_ERROR_INVALID_INPUT);
  CHECK_OK(kareus_controller_step_end(c));
  kareus_controller_free(c);
  kareus_schedule_free(s);

  FILE* f = fopen(path, "r");
  CHECK(f != NULL);
  char line[8192];
  size_t instructions = 0, ended = 0, iterations = 0, lines = 0;
  int last_is_end = 0;
  while (fgets(line, sizeof line, f)) {
    ++lines;
    instructions += strstr(line, "\"type\":\"instruction\"") != NULL;
    ended += strstr(line, "\"ended\":true") != NULL;
    iterations += strstr(line, "\"type\":\"iteration\"") != NULL;
    last_is_end = strstr(line, "\"type\":\"end\"") != NULL;
  }
  fclose(f);
  unlink(path);
  CHECK(lines > 0 && instructions == count && ended == count && iterations == 1 && last_is_end);
  return 0;
}

typedef struct {
  const char* name;
  int (*run)(void);
} test_case;

int main(void) {
  const char* data = getenv("KAREUS_TEST_DATA_DIR");
  if (!data || !getenv("KAREUS_NVML_LIBRARY") || !getenv("KAREUS_FAKE_NVML_SCRIPT")) {
    fprintf(stderr,
            "capi_test: set KAREUS_TEST_DATA_DIR, KAREUS_NVML_LIBRARY and "
            "KAREUS_FAKE_NVML_SCRIPT (ctest does)\n");
    return 2;
  }
  snprintf(schedule_path, sizeof schedule_path, "%s/runtime/two_stages.json", data);
  char dir[] = "/tmp/kareus-capi-test-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 2;
  }
  snprintf(log_path, sizeof log_path, "%s/nvml.log", dir);
  setenv("KAREUS_FAKE_NVML_LOG", log_path, 1);

  const test_case tests[] = {
      {"errors", test_errors},
      {"workload_errors", test_workload_errors},
      {"schedule_fixture", test_schedule_fixture},
      {"controller", test_controller},
      {"record", test_record},
      {"checks_and_step_clocks", test_checks_and_step_clocks},
      {"nvml_unavailable", test_nvml_unavailable},
      {"monitor", test_monitor},
      {"plan_from_file", test_plan_from_file},
      {"plan_to_controller", test_plan_to_controller},
  };
  int failed = 0;
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; ++i) {
    const int result = tests[i].run();
    printf("%s %s\n", result == 0 ? "PASS" : "FAIL", tests[i].name);
    failed += result != 0;
  }
  unlink(log_path);
  rmdir(dir);
  printf("%d of %zu C API tests failed\n", failed, sizeof tests / sizeof tests[0]);
  return failed == 0 ? 0 : 1;
}
