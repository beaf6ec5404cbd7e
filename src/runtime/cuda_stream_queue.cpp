// SPDX-License-Identifier: Apache-2.0
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>

#include "kareus/core/error.hpp"
#include "kareus/runtime/gpu_queue.hpp"

namespace kareus::runtime {
namespace {

// The driver API's types (cuda.h), declared here because Kareus builds without the toolkit.
using CUresult = int;
using CUstream = void*;
using CUhostFn = void (*)(void*);
using LaunchHostFunc = CUresult (*)(CUstream, CUhostFn, void*);
using GetErrorName = CUresult (*)(CUresult, const char**);

// Runs on the driver's callback thread; CUDA calls are not allowed there, and the stream waits
// until it returns, so it only hands the marker over.
void marker_reached(void* data) {
  std::unique_ptr<std::function<void()>> reached(static_cast<std::function<void()>*>(data));
  (*reached)();
}

class CudaStreamQueue final : public GpuQueue {
 public:
  explicit CudaStreamQueue(std::uintptr_t stream) : stream_(stream) {
    const char* override_path = std::getenv("KAREUS_CUDA_LIBRARY");
    const std::string path = override_path ? override_path : "libcuda.so.1";
    // Loaded once and never closed: a marker's host function may still run at process exit.
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* why = dlerror();
      throw Error::device(fmt::format("CUDA stream markers: cannot load {} ({})", path,
                                      why ? why : "unknown reason"));
    }
    launch_ = reinterpret_cast<LaunchHostFunc>(dlsym(handle_, "cuLaunchHostFunc"));
    error_name_ = reinterpret_cast<GetErrorName>(dlsym(handle_, "cuGetErrorName"));
    if (!launch_) {
      throw Error::device(fmt::format(
          "CUDA stream markers: {} has no cuLaunchHostFunc (a driver before CUDA 10)", path));
    }
  }

  void enqueue_marker(std::function<void()> reached) override {
    auto data = std::make_unique<std::function<void()>>(std::move(reached));
    const CUresult status =
        launch_(reinterpret_cast<CUstream>(stream_), marker_reached, data.get());
    if (status != 0) {
      const char* name = nullptr;
      if (error_name_) error_name_(status, &name);
      throw Error::device(fmt::format("cuLaunchHostFunc on {} failed: {} ({})", describe(),
                                      name ? name : "unknown error", status));
    }
    data.release();  // the host function owns it now
  }

  std::string describe() const override { return fmt::format("CUDA stream {:#x}", stream_); }

 private:
  std::uintptr_t stream_;
  void* handle_ = nullptr;
  LaunchHostFunc launch_ = nullptr;
  GetErrorName error_name_ = nullptr;
};

}  // namespace

std::unique_ptr<GpuQueue> cuda_stream_queue(std::uintptr_t stream) {
  return std::make_unique<CudaStreamQueue>(stream);
}

}  // namespace kareus::runtime
