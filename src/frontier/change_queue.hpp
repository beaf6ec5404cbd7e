// SPDX-License-Identifier: Apache-2.0
// Hands the min-cut steps' option changes, one batch per step, from the thread that takes the
// steps to the thread that measures their plans. Measuring a plan (three passes over the DAG with
// a search per instruction) needs nothing from the next step, and the next step nothing from the
// measurement, so the two run side by side; the plans are measured in step order, as before.
#pragma once

#include <condition_variable>
#include <mutex>
#include <vector>

#include "kareus/frontier/pipeline_solver.hpp"

namespace kareus::frontier {

class ChangeQueue {
 public:
  void push(std::vector<OptionChange> step) {
    {
      const std::lock_guard lock(mutex_);
      pending_.push_back(std::move(step));
    }
    ready_.notify_one();
  }

  void close() {
    {
      const std::lock_guard lock(mutex_);
      closed_ = true;
    }
    ready_.notify_one();
  }

  // Waits for steps and moves every pending one into `steps` (replacing its contents); false once
  // the queue is closed and drained.
  bool pop_all(std::vector<std::vector<OptionChange>>& steps) {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return closed_ || !pending_.empty(); });
    steps.clear();
    steps.swap(pending_);
    return !steps.empty();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<std::vector<OptionChange>> pending_;
  bool closed_ = false;
};

}  // namespace kareus::frontier
