// SPDX-License-Identifier: Apache-2.0
#include "termination.hpp"

#include <csignal>
#include <cstdlib>

namespace kareus::scaleout {
namespace {

volatile std::sig_atomic_t g_in_dispatch = 0;
volatile std::sig_atomic_t g_requested = 0;

extern "C" void on_terminate(int sig) {
  if (g_in_dispatch) {
    g_requested = 1;
    return;
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void install_termination_handler() {
  static const bool installed = [] {
    std::signal(SIGTERM, on_terminate);
    return true;
  }();
  (void)installed;
}

bool termination_requested() {
  return g_requested != 0;
}

void terminate_now() {
  std::signal(SIGTERM, SIG_DFL);
  std::raise(SIGTERM);
  std::_Exit(128 + SIGTERM);  // not reached: SIGTERM's default action ends the process
}

DispatchWindow::DispatchWindow() {
  g_in_dispatch = 1;
}

DispatchWindow::~DispatchWindow() {
  g_in_dispatch = 0;
}

}  // namespace kareus::scaleout
