// SPDX-License-Identifier: Apache-2.0
// Workloads the CUDA executor tests share: Llama 3.2 3B under TP and under CP + TP.
#pragma once

#include "kareus/workload/workload.hpp"

namespace kareus::testing {

inline workload::Workload llama3b(int tp, int cp, int mbs = 4, int seq = 2048) {
  workload::WorkloadRequest r;
  r.model = "llama3.2-3b";
  r.gpu = "h100-sxm";
  r.parallelism.tp = tp;
  r.parallelism.cp = cp;
  r.parallelism.microbatch_size = mbs;
  r.parallelism.sequence_length = seq;
  r.parallelism.recompute = workload::Recompute::kFull;
  return workload::make_workload(r);
}

}  // namespace kareus::testing
