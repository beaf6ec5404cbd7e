// When one rank dies, OpenMPI's launcher names it and terminates the others with SIGTERM; the
// coordinator then prints, from its signal handler, what it was waiting for and that what it had
// received is safe in the store, so the user knows a rerun resumes.
#pragma once

#include <string_view>

namespace kareus::scaleout {

// Installs the SIGTERM handler (once); the handler prints the latest notice and dies by SIGTERM.
void install_termination_notice();
// The text printed if the process is terminated from now on; empty prints nothing.
void set_termination_notice(std::string_view text);

}  // namespace kareus::scaleout
