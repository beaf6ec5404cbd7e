// SPDX-License-Identifier: Apache-2.0
// A GPU's work queue in software, for the stream-position tests: the host enqueues kernels (a
// duration and a function the "GPU" calls halfway through) and markers without waiting, and one
// thread runs them in order, from when start() is called, as a CUDA stream runs its work behind
// a host that launched ahead.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "kareus/runtime/gpu_queue.hpp"

namespace kareus::testing {

class SimulatedGpu final : public runtime::GpuQueue {
 public:
  SimulatedGpu() : thread_([this] { run(); }) {}
  ~SimulatedGpu() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      started_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  void enqueue_marker(std::function<void()> reached) override {
    push({std::chrono::milliseconds(0), std::move(reached)});
  }
  std::string describe() const override { return "simulated GPU"; }

  // A kernel of `duration`; `midway` runs halfway through it.
  void launch(std::chrono::milliseconds duration, std::function<void()> midway) {
    push({duration, std::move(midway)});
  }
  // The GPU begins working through its queue.
  void start() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      started_ = true;
    }
    changed_.notify_all();
  }
  // Blocks until everything enqueued has run.
  void drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return queue_.empty() && !running_; });
  }

 private:
  struct Item {
    std::chrono::milliseconds duration;
    std::function<void()> call;
  };
  void push(Item item) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(item));
    }
    changed_.notify_all();
  }
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stopping_ || (started_ && !queue_.empty()); });
      if (stopping_) return;
      Item item = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
      lock.unlock();
      std::this_thread::sleep_for(item.duration / 2);
      item.call();
      std::this_thread::sleep_for(item.duration - item.duration / 2);
      lock.lock();
      running_ = false;
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Item> queue_;
  bool started_ = false;
  bool running_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace kareus::testing
