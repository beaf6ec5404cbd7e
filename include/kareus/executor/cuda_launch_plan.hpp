// SPDX-License-Identifier: Apache-2.0
// What the CUDA executor launches for one run of a partition (docs/validation.md, "What the CUDA
// executor runs"): each compute kernel as cuBLAS matrix products or a memory-bound elementwise
// kernel with the workload's shapes, and the collective as a copy loop of the bytes one GPU moves
// in it, on a given number of SMs, launched just before one compute kernel. Plain C++ so that the
// translation is tested on machines without CUDA.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kareus/partition/config_space.hpp"
#include "kareus/partition/partition.hpp"

namespace kareus::executor::cuda {

// Bytes per bf16 element, as the workload model counts them.
inline constexpr std::int64_t kBf16Bytes = 2;

// Column-major bf16 products C[m x n] = A[m x k] B[k x n], `batch` of them per call.
struct GemmLaunch {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;
  int calls = 1;  // attention runs several products of one shape
};

enum class ElementwiseOp { kNorm, kRope, kActivation };

// Reads `inputs` bf16 streams of `elements` each and writes one.
struct ElementwiseLaunch {
  ElementwiseOp op = ElementwiseOp::kNorm;
  int inputs = 1;
  std::int64_t elements = 0;
};

struct ComputeLaunch {
  std::string name;
  std::optional<GemmLaunch> gemm;                // set for GEMMs and attention
  std::optional<ElementwiseLaunch> elementwise;  // set for memory-bound kernels
};

struct CommLaunch {
  std::int64_t bytes = 0;  // copied per run: the collective's bus bytes on one GPU
  int sms = 0;             // blocks of 1024 threads, one per SM
};

struct LaunchPlan {
  std::vector<ComputeLaunch> compute;
  std::optional<CommLaunch> comm;
  // The collective is enqueued just before compute[launch_index] (after the last kernel when it
  // equals compute.size()).
  int launch_index = 0;

  // Largest buffers any launch of the plan needs, in elements or bytes.
  std::int64_t max_gemm_a() const;
  std::int64_t max_gemm_b() const;
  std::int64_t max_gemm_c() const;
  std::int64_t max_elementwise() const;
};

// The launches of `p` under `config` on a GPU with `device_sms` SMs. Throws kareus::Error naming
// the partition and the field for an unknown slot, an SM count outside 1..device_sms-1, a
// collective inside the compute segment or a GEMM kernel without a shape.
LaunchPlan plan_partition(const partition::Partition& p, const partition::ExecConfig& config,
                          int device_sms);

}  // namespace kareus::executor::cuda
