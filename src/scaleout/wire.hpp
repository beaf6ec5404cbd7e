// SPDX-License-Identifier: Apache-2.0
// What travels between ranks: a task (which workload, which partition, which configurations) as
// JSON, and readings as raw doubles so they arrive bit for bit as measured.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/executor/executor.hpp"
#include "kareus/partition/config_space.hpp"

namespace kareus::scaleout::wire {

struct Task {
  std::size_t workload = 0;  // index into the command line's workloads
  std::string partition;     // representative partition key
  std::vector<partition::ExecConfig> configs;
};

std::string encode(const Task& task);
// Throws kareus::Error naming the field when `bytes` is not a task.
Task decode_task(std::string_view bytes);

std::string encode(const std::vector<executor::Measurement>& readings);
// Throws kareus::Error unless `bytes` holds exactly `expected` readings.
std::vector<executor::Measurement> decode_readings(std::string_view bytes, std::size_t expected,
                                                   int from_rank);

}  // namespace kareus::scaleout::wire
