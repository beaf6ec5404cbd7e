// SPDX-License-Identifier: Apache-2.0
#include "restore_on_signal.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <string.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include "kareus/core/error.hpp"
#include "kareus/runtime/frequency_controller.hpp"
#include "quiet_thread.hpp"

namespace kareus::runtime {
namespace {

// Every signal whose default action ends the process and that a user or the system sends to a
// training job: Ctrl-C, kill, an SSH hang-up, a quit from the terminal, a write to a closed pipe.
// SIGKILL and SIGSTOP cannot be caught; kareusd exists for SIGKILL.
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
constexpr int kSignalCount = sizeof kSignals / sizeof kSignals[0];

// Never destroyed: the atexit hook and the detached watcher may run after static destructors.
struct Registry {
  std::mutex mutex;
  std::set<FrequencyController*> live;
  bool watcher_started = false;
  bool handlers_installed = false;
  struct sigaction previous[kSignalCount] = {};
  bool caught[kSignalCount] = {};  // false where the signal was ignored and stays so
  bool warned[kSignalCount] = {};  // the program's replacement of our handler was reported
};

Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

int signal_pipe[2] = {-1, -1};

void on_signal(int signo) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(signo);
  const ssize_t ignored = write(signal_pipe[1], &byte, 1);
  (void)ignored;
  errno = saved;
}

void restore_all_locked(Registry& r) {
  for (FrequencyController* c : r.live) c->restore_default_clocks();
}

void release_all_locked(Registry& r, int signo) {
  for (FrequencyController* c : r.live) c->release_after_signal(signo);
}

void watch_signals() {
  for (;;) {
    unsigned char byte = 0;
    const ssize_t n = read(signal_pipe[0], &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    const int signo = byte;
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    release_all_locked(r, signo);
    // Hand the signal to whoever had it before: the default action ends the process with the
    // right status; Python's handler raises KeyboardInterrupt in the main thread; the program's
    // own handler (a trainer that saves a checkpoint on SIGTERM) decides what happens next.
    for (int i = 0; i < kSignalCount; ++i) {
      if (r.caught[i]) sigaction(kSignals[i], &r.previous[i], nullptr);
    }
    r.handlers_installed = false;
    kill(getpid(), signo);
  }
}

void restore_at_exit() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  restore_all_locked(r);
}

void install_locked(Registry& r) {
  if (!r.watcher_started) {
    if (pipe2(signal_pipe, O_CLOEXEC) != 0) throw Error::io("frequency controller: pipe2 failed");
    quiet_thread(watch_signals).detach();
    r.watcher_started = true;
  }
  struct sigaction action = {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < kSignalCount; ++i) {
    sigaction(kSignals[i], nullptr, &r.previous[i]);
    // An ignored signal (nohup's SIGHUP, SIGINT of a background job, Python's SIGPIPE) never
    // ended the process before the controller existed, so it must not end it now.
    r.caught[i] = r.previous[i].sa_handler != SIG_IGN;
    if (r.caught[i]) sigaction(kSignals[i], &action, nullptr);
  }
  r.handlers_installed = true;
}

}  // namespace

void register_for_restore(FrequencyController* controller, bool on_signals) {
  static const bool hooked = std::atexit(restore_at_exit) == 0;
  (void)hooked;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (on_signals && !r.handlers_installed) install_locked(r);
  r.live.insert(controller);
}

void unregister_for_restore(FrequencyController* controller) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.live.erase(controller);
}

void warn_of_replaced_handlers() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.handlers_installed) return;
  for (int i = 0; i < kSignalCount; ++i) {
    if (!r.caught[i] || r.warned[i]) continue;
    struct sigaction current = {};
    sigaction(kSignals[i], nullptr, &current);
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == on_signal) continue;
    r.warned[i] = true;
    std::fprintf(stderr,
                 "kareus: warning: the program replaced Kareus's %s handler; %s now reaches the "
                 "program without resetting the clocks, which come back when the frequency "
                 "controller is closed or the process exits (install the handler before creating "
                 "the controller to have both)\n",
                 signal_name(kSignals[i]).c_str(), signal_name(kSignals[i]).c_str());
  }
}

std::string signal_name(int signo) {
  const char* abbrev = sigabbrev_np(signo);
  return abbrev ? "SIG" + std::string(abbrev) : "signal " + std::to_string(signo);
}

}  // namespace kareus::runtime
