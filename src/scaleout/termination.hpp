// SPDX-License-Identifier: Apache-2.0
// When one rank dies, OpenMPI's launcher names it and stops the others with SIGTERM (SIGKILL a
// moment later). If that happens while the coordinator is in a dispatch, holding readings of a
// batch not yet committed, the signal only raises a flag: the dispatch commits what it received
// and fails with a message, so nothing measured is lost. Anywhere else SIGTERM kills as usual.
#pragma once

namespace kareus::scaleout {

// Installs the SIGTERM handler (once).
void install_termination_handler();
// Whether SIGTERM arrived during a dispatch.
bool termination_requested();
// Dies by SIGTERM now, the stop the launcher asked for.
[[noreturn]] void terminate_now();

// While one lives, SIGTERM sets the flag instead of killing the process.
class DispatchWindow {
 public:
  DispatchWindow();
  ~DispatchWindow();
  DispatchWindow(const DispatchWindow&) = delete;
  DispatchWindow& operator=(const DispatchWindow&) = delete;
};

}  // namespace kareus::scaleout
