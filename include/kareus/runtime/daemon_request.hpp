// SPDX-License-Identifier: Apache-2.0
// One kareusd request line, parsed and checked against what needs no daemon state: the JSON, the
// op, the field types and that every GPU index exists on this machine. What does need it (who
// registered a GPU, which clocks it supports) is the daemon's (daemon.hpp). Pure, so that fuzz/
// can feed it bytes without NVML or a socket.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace kareus::runtime {

enum class DaemonOp { kRegister, kSetSmClock, kResetSmClock, kReadEnergy };

struct DaemonRequest {
  DaemonOp op = DaemonOp::kReadEnergy;
  std::vector<unsigned> gpus;  // kRegister: the GPUs asked for, in request order
  unsigned gpu = 0;            // the other ops: their one GPU
  std::int64_t clock_mhz = 0;  // kSetSmClock: not yet checked against the GPU's clocks
};

// Throws Error "request: /field = value: what is allowed" for any line that is not a request
// (`line` without its newline) or names a GPU outside 0..device_count - 1.
DaemonRequest parse_daemon_request(std::string_view line, unsigned device_count);

}  // namespace kareus::runtime
