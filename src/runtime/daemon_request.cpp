// SPDX-License-Identifier: Apache-2.0
#include "kareus/runtime/daemon_request.hpp"

#include <fmt/format.h>

#include <string>

#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"

namespace kareus::runtime {
namespace {

unsigned gpu_index(const JsonValue& value, unsigned device_count) {
  const std::int64_t index = value.as_integer();
  if (index < 0 || index >= static_cast<std::int64_t>(device_count))
    value.fail(fmt::format("this machine has GPUs 0..{}", static_cast<int>(device_count) - 1));
  return static_cast<unsigned>(index);
}

}  // namespace

DaemonRequest parse_daemon_request(std::string_view line, unsigned device_count) {
  const JsonDocument doc = JsonDocument::parse(line, "request");
  const JsonValue request = doc.root();
  const JsonValue op = request.at("op");
  const std::string name = op.as_string();
  DaemonRequest r;
  if (name == "register") {
    r.op = DaemonOp::kRegister;
    const JsonValue gpus = request.at("gpus");
    if (!gpus.is_array() || gpus.size() == 0)
      gpus.fail("expected a non-empty array of GPU indices");
    for (std::size_t i = 0; i < gpus.size(); ++i)
      r.gpus.push_back(gpu_index(gpus.at(i), device_count));
    return r;
  }
  if (name == "set_sm_clock")
    r.op = DaemonOp::kSetSmClock;
  else if (name == "reset_sm_clock")
    r.op = DaemonOp::kResetSmClock;
  else if (name == "read_energy")
    r.op = DaemonOp::kReadEnergy;
  else
    op.fail("expected register, set_sm_clock, reset_sm_clock or read_energy");
  r.gpu = gpu_index(request.at("gpu"), device_count);
  if (r.op == DaemonOp::kSetSmClock) r.clock_mhz = request.integer("clock_mhz");
  return r;
}

}  // namespace kareus::runtime
