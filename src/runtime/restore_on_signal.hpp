// SPDX-License-Identifier: Apache-2.0
// Restores the default clocks of every live FrequencyController when the process gets SIGINT,
// SIGTERM, SIGHUP, SIGQUIT or SIGPIPE, or exits without destroying one. Decided per signal: one
// the process ignores stays ignored; any other is caught, and after the reset it goes on to the
// disposition the program had (the default action, Python's KeyboardInterrupt, or the program's
// own handler, after which the job may go on with its controllers released). The signal handler
// only writes the signal number to a pipe (async-signal-safe); a watcher thread does the NVML or
// kareusd calls and then re-raises the signal under the program's disposition.
#pragma once

#include <string>

namespace kareus::runtime {

class FrequencyController;

void register_for_restore(FrequencyController* controller, bool on_signals);
void unregister_for_restore(FrequencyController* controller);

// Warns once per signal (on stderr) when the program replaced the handler installed for it after
// the first controller was created: that signal then reaches the program without a reset, and
// the clocks come back only when the controller is closed or the process exits.
void warn_of_replaced_handlers();

// "SIGTERM".
std::string signal_name(int signo);

}  // namespace kareus::runtime
