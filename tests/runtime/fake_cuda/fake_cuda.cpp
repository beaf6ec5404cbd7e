// SPDX-License-Identifier: Apache-2.0
// A stand-in for the driver's libcuda.so.1 with the two entry points the runtime's CUDA stream
// markers use (cuLaunchHostFunc, cuGetErrorName), loaded through KAREUS_CUDA_LIBRARY. Its stream
// is a late GPU: each host function runs on the library's own thread, in order, after the
// kernel queued before it, which takes KAREUS_FAKE_CUDA_KERNEL_MS (default 20 ms). The stream
// handle 0xdead is invalid (CUDA_ERROR_INVALID_HANDLE, 400).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace {

using HostFn = void (*)(void*);

class LateStream {
 public:
  LateStream() {
    const char* ms = std::getenv("KAREUS_FAKE_CUDA_KERNEL_MS");
    kernel_ = std::chrono::milliseconds(ms ? std::atoi(ms) : 20);
    std::thread([this] { run(); }).detach();  // lives as long as the process
  }
  void push(HostFn fn, void* data) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.emplace_back(fn, data);
    }
    changed_.notify_one();
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return !queue_.empty(); });
      const auto [fn, data] = queue_.front();
      queue_.pop_front();
      lock.unlock();
      std::this_thread::sleep_for(kernel_);
      fn(data);
      lock.lock();
    }
  }
  std::chrono::milliseconds kernel_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::pair<HostFn, void*>> queue_;
};

LateStream& stream() {
  static LateStream* s = new LateStream;  // never destroyed: its thread outlives static teardown
  return *s;
}

}  // namespace

extern "C" int cuLaunchHostFunc(void* handle, HostFn fn, void* data) {
  if (reinterpret_cast<std::uintptr_t>(handle) == 0xdead) return 400;
  stream().push(fn, data);
  return 0;
}

extern "C" int cuGetErrorName(int error, const char** name) {
  *name = error == 400 ? "CUDA_ERROR_INVALID_HANDLE" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
