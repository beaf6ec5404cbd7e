// SPDX-License-Identifier: Apache-2.0
// Checks made before the first clock change: does the schedule fit the job that is about to run
// it (parallel sizes, model, recompute mode, microbatches, pipeline size, one rank per GPU) and
// the GPU it runs on? A mismatch found only at the end of an iteration would already have
// changed the clocks several times.
#pragma once

#include <string>
#include <vector>

#include "kareus/schedule/schedule.hpp"

namespace kareus::runtime {

// What the job runs; each field left at its default is not checked. The parallel sizes, model
// and recompute mode are compared with the schedule's workload echo
// (workload.parallelism.tp, ..., workload.model), which `kareus plan` writes.
struct JobShape {
  int pipeline_stages = 0;  // 0: not checked
  int microbatches = 0;     // per iteration; 0: not checked
  std::string gpu_name;     // as NVML reports it; empty: not checked
  int tp = 0;               // tensor-parallel size; 0: not checked
  int cp = 0;               // context-parallel size
  int dp = 0;               // data-parallel size
  std::string model;        // the catalogue id the job trains ("llama3.2-3b")
  std::string recompute;    // "full" | "none"
  // Model chunks per pipeline rank: above 1, Megatron's interleaved (virtual-pipeline) 1F1B,
  // whose instruction order no Kareus schedule has.
  int virtual_pipeline_stages = 0;
  // Other ranks of the job whose GPU is this rank's (host and NVML index): one rank per GPU, or
  // the clocks of one rank apply to the other's work and the job's energy counts the GPU twice.
  int rank = -1;
  std::vector<int> ranks_sharing_gpu;
};

// Every mismatch between `schedule` and `job`, joined into one sentence; empty when they fit.
std::string job_mismatches(const Schedule& schedule, const JobShape& job);

// Throws Error with job_mismatches() unless it is empty.
void check_job(const Schedule& schedule, const JobShape& job);

// Whether two GPU names denote the same model: the catalogue id `kareus plan` writes
// ("a100-sxm4-40gb") and NVML's name ("NVIDIA A100-SXM4-40GB") do. The model token (the first
// with a digit: a100, h200, rtx3080ti) must agree, one contained in the other's spelling, and
// so must the memory size where both name one (40gb vs 80gb).
bool same_gpu_model(const std::string& a, const std::string& b);

// Microbatches per iteration of the schedule (the same on every stage, validated on load).
int microbatches_of(const Schedule& schedule);

}  // namespace kareus::runtime
