// SPDX-License-Identifier: Apache-2.0
// The CUDA kernels of the partition runner, behind plain launch functions so that host code
// compiled by the C++ compiler never sees device code. Each returns the launch's error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace kareus::executor::cuda {

// Fills `bytes` (a multiple of 2) with bf16 values in [-1, 1] from a hash of the index: GEMMs on
// zeros draw far less power than on real activations, so energy readings need non-zero data.
cudaError_t launch_fill(void* data, std::int64_t bytes, std::uint32_t seed, cudaStream_t stream);

// op 0 = norm, 1 = rotary, 2 = gated activation (the ElementwiseOp order); `in1` is read only by
// the activation. `elements` is even.
cudaError_t launch_elementwise(int op, const void* in0, const void* in1, void* out,
                               std::int64_t elements, int blocks, cudaStream_t stream);

// Shared memory the communication kernel reserves per block so that no second block of it fits
// on an SM: more than half of an SM's shared memory. Sets the kernel attribute that allows it.
cudaError_t prepare_comm_kernel(int device, std::size_t* reserved_shared_bytes);

// Copies `bytes` (a multiple of 16) from src to dst with `blocks` blocks of 1024 threads, one
// per SM (the artifact's comm grid: sm_num blocks x 1024 threads).
cudaError_t launch_comm_copy(const void* src, void* dst, std::int64_t bytes, int blocks,
                             std::size_t reserved_shared_bytes, cudaStream_t stream);

}  // namespace kareus::executor::cuda
