// SPDX-License-Identifier: Apache-2.0
// The Llama-3.2-3B workloads (PP2, microbatch 8, sequence 4096, 8 microbatches, full
// recomputation) in TP8 and CP2+TP4 layouts.
#pragma once

#include <string>

#include "kareus/workload/workload.hpp"

namespace kareus::testing {

// The request, for a test to change before make_workload.
inline workload::WorkloadRequest llama3b_request(int tp, int cp,
                                                 const std::string& gpu = "a100-sxm4-40gb",
                                                 int microbatch_size = 8) {
  workload::WorkloadRequest r;
  r.model = "llama3.2-3b";
  r.gpu = gpu;
  r.parallelism.tp = tp;
  r.parallelism.cp = cp;
  r.parallelism.pp = 2;
  r.parallelism.microbatch_size = microbatch_size;
  r.parallelism.sequence_length = 4096;
  r.parallelism.microbatches = 8;
  r.parallelism.recompute = workload::Recompute::kFull;
  return r;
}

inline workload::Workload llama3b(int tp, int cp, const std::string& gpu = "a100-sxm4-40gb",
                                  int microbatch_size = 8) {
  return workload::make_workload(llama3b_request(tp, cp, gpu, microbatch_size));
}

}  // namespace kareus::testing
