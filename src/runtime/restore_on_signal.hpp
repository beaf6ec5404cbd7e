// Restores the default clocks of every live FrequencyController when the process gets SIGINT,
// SIGTERM, SIGHUP, SIGQUIT or SIGPIPE (unless that signal was ignored), or exits without
// destroying one. The signal handler only writes the signal number to a
// pipe (async-signal-safe); a watcher thread does the NVML or kareusd calls and then re-raises the
// signal under the handler that was installed before.
#pragma once

namespace kareus::runtime {

class FrequencyController;

void register_for_restore(FrequencyController* controller, bool on_signals);
void unregister_for_restore(FrequencyController* controller);

}  // namespace kareus::runtime
