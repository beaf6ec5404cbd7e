// SPDX-License-Identifier: Apache-2.0
// Runs a LaunchPlan on one CUDA device: compute on one stream (cuBLAS products and elementwise
// kernels), the communication copy loop on a second stream gated by an event recorded just
// before its launch op, and the compute stream waiting for it at the end of every run
// (docs/validation.md), so a run lasts about max(compute, launch offset + comm).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "kareus/core/units.hpp"
#include "kareus/executor/cuda_launch_plan.hpp"

namespace kareus::executor::cuda {

// Throws kareus::Error "CUDA <call>: <reason>" unless `code` is cudaSuccess.
void check_cuda(cudaError_t code, const char* call);

// Grow-only device allocation, filled with hashed bf16 values when it grows.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void reserve(std::int64_t bytes, std::uint32_t seed, cudaStream_t stream);
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
  std::int64_t bytes_ = 0;
};

class PartitionRunner {
 public:
  explicit PartitionRunner(int device);
  ~PartitionRunner();
  PartitionRunner(const PartitionRunner&) = delete;
  PartitionRunner& operator=(const PartitionRunner&) = delete;

  int sm_count() const { return sm_count_; }
  const std::string& device_name() const { return device_name_; }

  // Allocates and fills what `plan` needs (buffers only grow, so a partition's configurations
  // share them).
  void prepare(const LaunchPlan& plan);
  // Enqueues `runs` back-to-back runs of `plan` between two timing events and returns at once.
  void begin(const LaunchPlan& plan, long runs);
  // Whether the runs begun last are still executing.
  bool busy() const;
  // Waits for the runs begun last and returns their GPU time.
  Seconds finish();

 private:
  void enqueue_run(const LaunchPlan& plan);
  void enqueue_compute(const ComputeLaunch& launch);
  void enqueue_comm(const CommLaunch& comm);

  int device_;
  int sm_count_ = 0;
  std::string device_name_;
  std::size_t comm_shared_bytes_ = 0;
  cudaStream_t compute_ = nullptr;
  cudaStream_t comm_ = nullptr;
  cudaEvent_t launch_ = nullptr;     // compute reached the launch op
  cudaEvent_t comm_done_ = nullptr;  // the copy loop finished
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  DeviceBuffer gemm_a_, gemm_b_, gemm_c_;
  DeviceBuffer in0_, in1_, out_;
  DeviceBuffer comm_src_, comm_dst_;
};

}  // namespace kareus::executor::cuda
