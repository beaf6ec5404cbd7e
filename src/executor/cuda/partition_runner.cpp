// SPDX-License-Identifier: Apache-2.0
#include "partition_runner.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "device_kernels.hpp"
#include "kareus/core/error.hpp"

namespace kareus::executor::cuda {
namespace {

void check_cublas(cublasStatus_t code, const char* call) {
  if (code == CUBLAS_STATUS_SUCCESS) return;
  throw Error::device(fmt::format("cuBLAS {}: {}", call, cublasGetStatusString(code)));
}

}  // namespace

void check_cuda(cudaError_t code, const char* call) {
  if (code == cudaSuccess) return;
  throw Error::device(fmt::format("CUDA {}: {}", call, cudaGetErrorString(code)));
}

DeviceBuffer::~DeviceBuffer() {
  if (data_) cudaFree(data_);
}

void DeviceBuffer::reserve(std::int64_t bytes, std::uint32_t seed, cudaStream_t stream) {
  if (bytes <= bytes_) return;
  if (data_) check_cuda(cudaFree(data_), "cudaFree");
  data_ = nullptr;
  bytes_ = 0;
  const cudaError_t e = cudaMalloc(&data_, static_cast<std::size_t>(bytes));
  if (e != cudaSuccess) {
    data_ = nullptr;
    throw Error::device(
        fmt::format("CUDA cudaMalloc of {} bytes for a partition's buffers: {}; choose a "
                    "smaller workload (microbatch size, sequence length)",
                    bytes, cudaGetErrorString(e)));
  }
  bytes_ = bytes;
  check_cuda(launch_fill(data_, bytes, seed, stream), "fill kernel launch");
}

PartitionRunner::PartitionRunner(int device) : device_(device) {
  check_cuda(cudaSetDevice(device_), "cudaSetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
  sm_count_ = prop.multiProcessorCount;
  device_name_ = prop.name;
  check_cuda(prepare_comm_kernel(device_, &comm_shared_bytes_), "comm kernel attributes");
  check_cuda(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaStreamCreateWithFlags(&comm_, cudaStreamNonBlocking), "cudaStreamCreate");
  for (cudaEvent_t* e : {&launch_, &comm_done_}) {
    check_cuda(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "cudaEventCreate");
  }
  for (cudaEvent_t* e : {&start_, &stop_}) check_cuda(cudaEventCreate(e), "cudaEventCreate");
  check_cublas(cublasCreate(&cublas_), "cublasCreate");
  check_cublas(cublasSetStream(cublas_, compute_), "cublasSetStream");
}

PartitionRunner::~PartitionRunner() {
  // Teardown errors cannot be acted on; the context goes with the process.
  cudaSetDevice(device_);
  cudaDeviceSynchronize();
  if (cublas_) cublasDestroy(cublas_);
  for (cudaEvent_t e : {launch_, comm_done_, start_, stop_})
    if (e) cudaEventDestroy(e);
  for (cudaStream_t s : {compute_, comm_})
    if (s) cudaStreamDestroy(s);
}

void PartitionRunner::prepare(const LaunchPlan& plan) {
  check_cuda(cudaSetDevice(device_), "cudaSetDevice");
  gemm_a_.reserve(kBf16Bytes * plan.max_gemm_a(), 1, compute_);
  gemm_b_.reserve(kBf16Bytes * plan.max_gemm_b(), 2, compute_);
  gemm_c_.reserve(kBf16Bytes * plan.max_gemm_c(), 3, compute_);
  in0_.reserve(kBf16Bytes * plan.max_elementwise(), 4, compute_);
  in1_.reserve(kBf16Bytes * plan.max_elementwise(), 5, compute_);
  out_.reserve(kBf16Bytes * plan.max_elementwise(), 6, compute_);
  if (plan.comm) {
    comm_src_.reserve(plan.comm->bytes, 7, compute_);
    comm_dst_.reserve(plan.comm->bytes, 8, compute_);
  }
  check_cuda(cudaStreamSynchronize(compute_), "buffer fill");
}

void PartitionRunner::enqueue_compute(const ComputeLaunch& launch) {
  if (launch.gemm) {
    const GemmLaunch& g = *launch.gemm;
    const float alpha = 1.0f, beta = 0.0f;
    for (int call = 0; call < g.calls; ++call) {
      check_cublas(
          cublasGemmStridedBatchedEx(
              cublas_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(g.m), static_cast<int>(g.n),
              static_cast<int>(g.k), &alpha, gemm_a_.data(), CUDA_R_16BF, static_cast<int>(g.m),
              g.m * g.k, gemm_b_.data(), CUDA_R_16BF, static_cast<int>(g.k), g.k * g.n, &beta,
              gemm_c_.data(), CUDA_R_16BF, static_cast<int>(g.m), g.m * g.n,
              static_cast<int>(g.batch), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
    }
    return;
  }
  const ElementwiseLaunch& e = *launch.elementwise;
  // Enough blocks to keep every SM's memory pipeline busy; the loop strides over the rest.
  const std::int64_t wanted = (e.elements / 2 + 255) / 256;
  const int blocks = static_cast<int>(std::clamp<std::int64_t>(wanted, 1, 8LL * sm_count_));
  check_cuda(launch_elementwise(static_cast<int>(e.op), in0_.data(), in1_.data(), out_.data(),
                                e.elements, blocks, compute_),
             "elementwise kernel launch");
}

void PartitionRunner::enqueue_comm(const CommLaunch& comm) {
  check_cuda(cudaEventRecord(launch_, compute_), "cudaEventRecord");
  check_cuda(cudaStreamWaitEvent(comm_, launch_, 0), "cudaStreamWaitEvent");
  check_cuda(launch_comm_copy(comm_src_.data(), comm_dst_.data(), comm.bytes, comm.sms,
                              comm_shared_bytes_, comm_),
             "comm kernel launch");
  check_cuda(cudaEventRecord(comm_done_, comm_), "cudaEventRecord");
}

void PartitionRunner::enqueue_run(const LaunchPlan& plan) {
  for (std::size_t i = 0; i < plan.compute.size(); ++i) {
    if (plan.comm && static_cast<std::size_t>(plan.launch_index) == i) enqueue_comm(*plan.comm);
    enqueue_compute(plan.compute[i]);
  }
  if (!plan.comm) return;
  if (static_cast<std::size_t>(plan.launch_index) >= plan.compute.size()) enqueue_comm(*plan.comm);
  check_cuda(cudaStreamWaitEvent(compute_, comm_done_, 0), "cudaStreamWaitEvent");
}

void PartitionRunner::begin(const LaunchPlan& plan, long runs) {
  check_cuda(cudaSetDevice(device_), "cudaSetDevice");
  check_cuda(cudaEventRecord(start_, compute_), "cudaEventRecord");
  for (long r = 0; r < runs; ++r) enqueue_run(plan);
  check_cuda(cudaEventRecord(stop_, compute_), "cudaEventRecord");
}

bool PartitionRunner::busy() const {
  const cudaError_t e = cudaEventQuery(stop_);
  if (e == cudaErrorNotReady) return true;
  check_cuda(e, "cudaEventQuery");
  return false;
}

Seconds PartitionRunner::finish() {
  check_cuda(cudaEventSynchronize(stop_), "cudaEventSynchronize");
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
  return milliseconds(ms);
}

}  // namespace kareus::executor::cuda
