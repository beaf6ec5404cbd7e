// SPDX-License-Identifier: Apache-2.0
// Where the GPU is in the work the host has queued for it. CUDA runs kernels asynchronously: the
// host launches instructions ahead of the GPU, so a clock set when the host reaches an
// instruction can land during an earlier one. The frequency controller therefore enqueues a
// marker on the GPU's queue at each clock change and applies the change when the GPU reaches
// the marker, without making the host wait.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace kareus::runtime {

class GpuQueue {
 public:
  virtual ~GpuQueue() = default;
  // Enqueues a marker behind the work queued so far and returns without waiting. `reached` runs
  // once the GPU gets there, on a thread of the queue's, in the order the markers were enqueued.
  // It must return quickly: the GPU may wait for it.
  virtual void enqueue_marker(std::function<void()> reached) = 0;
  // "CUDA stream 0x7f..", for messages.
  virtual std::string describe() const = 0;
};

// A CUDA stream (a cudaStream_t / CUstream handle, e.g. torch.cuda.current_stream().cuda_stream;
// 0 is the legacy default stream). Markers are host functions (cuLaunchHostFunc of the driver
// API, loaded at run time from libcuda.so.1 or KAREUS_CUDA_LIBRARY, so Kareus has no build
// dependency on CUDA). The stream's context must be current on the thread that enqueues, as it
// is on any thread that has launched CUDA work (the training loop's, autograd's).
std::unique_ptr<GpuQueue> cuda_stream_queue(std::uintptr_t stream);

}  // namespace kareus::runtime
