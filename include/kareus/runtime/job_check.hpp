// Checks made before the first clock change: does the schedule fit the job that is about to run
// it (pipeline stages, microbatches per iteration) and the GPU it runs on? A mismatch found only
// at the end of an iteration would already have changed the clocks several times.
#pragma once

#include <string>

#include "kareus/schedule/schedule.hpp"

namespace kareus::runtime {

struct JobShape {
  int pipeline_stages = 0;  // 0: not checked
  int microbatches = 0;     // per iteration; 0: not checked
  std::string gpu_name;     // as NVML reports it; empty: not checked
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
