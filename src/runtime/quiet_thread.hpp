// SPDX-License-Identifier: Apache-2.0
// Threads the runtime starts for itself (the controller's worker, the energy sampler, the signal
// watcher) with the termination signals blocked. A signal sent to the process goes to any thread
// that does not block it; the application's handlers expect to run on its own threads (Python
// runs its handlers in the main thread, and only a signal delivered there cuts a blocking call
// short), and the watcher's re-raise must reach one of them.
#pragma once

#include <signal.h>

#include <thread>
#include <utility>

namespace kareus::runtime {

template <class Function>
std::thread quiet_thread(Function&& function) {
  sigset_t blocked, previous;
  sigemptyset(&blocked);
  for (int signo : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) sigaddset(&blocked, signo);
  // The new thread inherits the creating thread's mask; the creator gets its own back at once.
  pthread_sigmask(SIG_BLOCK, &blocked, &previous);
  std::thread thread(std::forward<Function>(function));
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return thread;
}

}  // namespace kareus::runtime
