// SPDX-License-Identifier: Apache-2.0
// A training job: model, GPU type and parallelism layout. Built from flags or a workload JSON.
#pragma once

#include <string>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/hardware/gpu_spec.hpp"
#include "kareus/workload/model.hpp"

namespace kareus::workload {

enum class Recompute { kNone, kFull };
const char* to_string(Recompute r);  // "none" | "full"

struct Parallelism {
  int tp = 1;
  int cp = 1;
  int pp = 1;
  int dp = 1;
  int microbatch_size = 1;
  int sequence_length = 2048;
  int microbatches = 1;
  Recompute recompute = Recompute::kNone;
  // Layers per pipeline stage; empty means "as even as possible, earlier stages take the extra".
  std::vector<int> layer_split;
  int gpus_per_node = 8;
};

struct Workload {
  ModelConfig model;
  GpuSpec gpu;
  Parallelism parallelism;

  int total_gpus() const;
  int gpus_per_stage() const { return parallelism.tp * parallelism.cp; }
  std::vector<int> stage_layers() const;
  // Tokens one GPU processes per microbatch (its sequence shard under CP).
  double tokens_per_microbatch() const;
  // Whether PP neighbours and DP peers sit in other nodes (TP x CP groups fill nodes first).
  bool pipeline_crosses_nodes() const;
  bool data_parallel_crosses_nodes() const;
  Json to_json() const;
};

// The raw inputs a user gives, before validation.
struct WorkloadRequest {
  std::string model;
  std::string gpu;
  Parallelism parallelism;
  std::string where = "command line";  // for error messages
  // A training job must fit in its GPUs' memory (workload/memory.hpp); a study of a few of its
  // layers' kernels (kernel-dvfs) need not.
  bool training_job = true;
};

// Validates everything (divisibility of heads, sequence, layers; positive sizes; for a training
// job, model states that can fit in the GPUs' memory) and loads the model and GPU; throws
// kareus::Error naming the offending field.
Workload make_workload(const WorkloadRequest& request);
// Reads {"model": ..., "gpu": ..., "parallelism": {"tp": 8, ...}} from a JSON file.
WorkloadRequest read_workload_request(const std::string& path);
// The same object inside another document (e.g. the "workload" echo of a plan's summary.json).
WorkloadRequest workload_request_from_json(const JsonValue& value, const std::string& where);
Recompute parse_recompute(const std::string& text, const std::string& where);

}  // namespace kareus::workload
