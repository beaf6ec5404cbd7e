// SPDX-License-Identifier: Apache-2.0
// kareusd's state file: the GPUs whose clocks it locked, so that a daemon restarted after a
// kill -9 resets them. Written often (before every lock, after every reset), read once at start.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kareus::runtime {

struct DaemonState {
  std::vector<unsigned> locked_gpus;
  // Set when the file exists but cannot be read completely (garbage, 1e400, wrong types): then
  // nobody knows what the previous daemon locked.
  std::optional<std::string> problem;
};

// An absent file is an empty state.
DaemonState read_daemon_state(const std::filesystem::path& path);
// Replaces the file atomically through a fresh mkstemp file in the same directory (never a fixed
// name that someone could have planted as a symbolic link). Throws Error naming the file.
void write_daemon_state(const std::filesystem::path& path, const std::set<unsigned>& locked_gpus);

}  // namespace kareus::runtime
