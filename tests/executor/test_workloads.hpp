// Workloads the emulator tests share.
#pragma once

#include "kareus/workload/workload.hpp"

namespace kareus::testing {

inline workload::Workload llama3b(int tp, int cp, int mbs = 8, const char* gpu = "a100-sxm4-40gb") {
  workload::WorkloadRequest r;
  r.model = "llama3.2-3b";
  r.gpu = gpu;
  r.parallelism.tp = tp;
  r.parallelism.cp = cp;
  r.parallelism.pp = 2;
  r.parallelism.microbatch_size = mbs;
  r.parallelism.sequence_length = 4096;
  r.parallelism.microbatches = 8;
  r.parallelism.recompute = workload::Recompute::kFull;
  return workload::make_workload(r);
}

}  // namespace kareus::testing
