// SPDX-License-Identifier: Apache-2.0
#include <cuda_bf16.h>

#include <algorithm>

#include "device_kernels.hpp"

namespace kareus::executor::cuda {
namespace {

constexpr int kCommThreads = 1024;
constexpr int kElementwiseThreads = 256;

__device__ float hashed_unit(std::uint64_t i, std::uint32_t seed) {
  // SplitMix64 finaliser: cheap, well mixed, no state.
  std::uint64_t z = i + 0x9E3779B97F4A7C15ULL * (seed + 1ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void fill_kernel(__nv_bfloat16* data, std::int64_t n, std::uint32_t seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    data[i] = __float2bfloat16(hashed_unit(static_cast<std::uint64_t>(i), seed));
  }
}

// RMSNorm-like scaling; a per-element bound instead of a row reduction keeps it one pass over
// HBM, which is what the real kernel costs.
__global__ void norm_kernel(const __nv_bfloat162* x, __nv_bfloat162* y, std::int64_t pairs) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < pairs;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float2 v = __bfloat1622float2(x[i]);
    const float scale = rsqrtf(0.5f * (v.x * v.x + v.y * v.y) + 1e-6f);
    y[i] = __floats2bfloat162_rn(v.x * scale, v.y * scale);
  }
}

// Rotary embedding: each pair is rotated by an angle that depends on its position in the head.
__global__ void rope_kernel(const __nv_bfloat162* x, __nv_bfloat162* y, std::int64_t pairs) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < pairs;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float2 v = __bfloat1622float2(x[i]);
    float s, c;
    __sincosf(static_cast<float>(i % 64) * 0.15f, &s, &c);
    y[i] = __floats2bfloat162_rn(v.x * c - v.y * s, v.x * s + v.y * c);
  }
}

// SwiGLU: silu(gate) x up.
__global__ void activation_kernel(const __nv_bfloat162* gate, const __nv_bfloat162* up,
                                  __nv_bfloat162* y, std::int64_t pairs) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < pairs;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float2 g = __bfloat1622float2(gate[i]);
    const float2 u = __bfloat1622float2(up[i]);
    y[i] =
        __floats2bfloat162_rn(g.x / (1.0f + __expf(-g.x)) * u.x, g.y / (1.0f + __expf(-g.y)) * u.y);
  }
}

__global__ void __launch_bounds__(kCommThreads, 1)
    comm_copy_kernel(const int4* src, int4* dst, std::int64_t vectors) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       i < vectors; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    dst[i] = src[i];
  }
}

}  // namespace

cudaError_t launch_fill(void* data, std::int64_t bytes, std::uint32_t seed, cudaStream_t stream) {
  const std::int64_t n = bytes / 2;
  const int blocks = static_cast<int>(std::min<std::int64_t>(4096, (n + 255) / 256));
  fill_kernel<<<std::max(blocks, 1), 256, 0, stream>>>(static_cast<__nv_bfloat16*>(data), n, seed);
  return cudaGetLastError();
}

cudaError_t launch_elementwise(int op, const void* in0, const void* in1, void* out,
                               std::int64_t elements, int blocks, cudaStream_t stream) {
  const std::int64_t pairs = elements / 2;
  const auto* x = static_cast<const __nv_bfloat162*>(in0);
  auto* y = static_cast<__nv_bfloat162*>(out);
  switch (op) {
    case 0:
      norm_kernel<<<blocks, kElementwiseThreads, 0, stream>>>(x, y, pairs);
      break;
    case 1:
      rope_kernel<<<blocks, kElementwiseThreads, 0, stream>>>(x, y, pairs);
      break;
    case 2:
      activation_kernel<<<blocks, kElementwiseThreads, 0, stream>>>(
          x, static_cast<const __nv_bfloat162*>(in1), y, pairs);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t prepare_comm_kernel(int device, std::size_t* reserved_shared_bytes) {
  int per_sm = 0, per_block = 0;
  cudaError_t e =
      cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
  if (e != cudaSuccess) return e;
  e = cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (e != cudaSuccess) return e;
  const int reserve = std::min(per_block, per_sm / 2 + 1024);
  e = cudaFuncSetAttribute(comm_copy_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, reserve);
  if (e != cudaSuccess) return e;
  *reserved_shared_bytes = static_cast<std::size_t>(reserve);
  return cudaSuccess;
}

cudaError_t launch_comm_copy(const void* src, void* dst, std::int64_t bytes, int blocks,
                             std::size_t reserved_shared_bytes, cudaStream_t stream) {
  comm_copy_kernel<<<blocks, kCommThreads, reserved_shared_bytes, stream>>>(
      static_cast<const int4*>(src), static_cast<int4*>(dst), bytes / 16);
  return cudaGetLastError();
}

}  // namespace kareus::executor::cuda
