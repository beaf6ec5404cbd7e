// SPDX-License-Identifier: Apache-2.0
// The configuration space of one partition key (Kareus §4.1, Appendix C): SM clock x SMs
// of the communication kernel x launch slot. Every configuration has a stable integer id and a
// text form such as "norm_0/12sm@1230MHz" that the measurement store is keyed by.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/core/units.hpp"
#include "kareus/hardware/gpu_spec.hpp"
#include "kareus/partition/partition.hpp"

namespace kareus::partition {

// One execution configuration of a partition.
struct ExecConfig {
  std::string slot;  // launch slot, e.g. "norm_0"
  int comm_sms = 0;  // SMs of the communication kernel
  MHz clock;         // locked SM clock

  // "norm_0/12sm@1230MHz".
  std::string key() const;
  // {"slot": "norm_0", "comm_sms": 12, "clock_mhz": 1230, "key": "norm_0/12sm@1230MHz"}.
  Json to_json() const;
};

// SM counts the search gives a collective (paper App. C): 1..20 step 1 when its group has fewer
// than 4 GPUs, 3..30 step 3 for groups of 4 or more.
std::vector<int> comm_sm_counts(const workload::Kernel& collective);

class ConfigSpace {
 public:
  // Position of a configuration along each axis.
  struct Index {
    std::size_t clock = 0;
    std::size_t sms = 0;
    std::size_t slot = 0;
  };

  // The space of `p` on `gpu`: the GPU file's search clocks, comm_sm_counts of the partition's
  // collective and its launch options. Throws kareus::Error for partitions with nothing to search
  // (fixed trail partitions, partitions without a collective).
  static ConfigSpace of(const Partition& p, const GpuSpec& gpu);

  // Axes in the order ids enumerate them; each must be non-empty and free of duplicates.
  ConfigSpace(std::string partition_key, std::vector<MHz> clocks, std::vector<int> comm_sms,
              std::vector<std::string> slots);

  const std::string& partition_key() const { return partition_key_; }
  const std::vector<MHz>& clocks() const { return clocks_; }
  const std::vector<int>& comm_sms() const { return comm_sms_; }
  const std::vector<std::string>& slots() const { return slots_; }

  // clocks x comm SMs x slots; ids 0..size()-1 with the slot varying fastest, then the SM count,
  // then the clock, so an id means the same configuration in every run.
  std::size_t size() const { return clocks_.size() * comm_sms_.size() * slots_.size(); }
  Index index(std::size_t id) const;
  std::size_t id(const Index& index) const;
  ExecConfig at(std::size_t id) const;
  std::string key(std::size_t id) const { return at(id).key(); }

  // Inverse of at() and key(); throw kareus::Error naming the value and what this space allows.
  std::size_t id_of(const ExecConfig& config) const;
  std::size_t parse(std::string_view key) const;
  // Accepts either the key string or the object ExecConfig::to_json writes.
  std::size_t from_json(const JsonValue& value) const;

 private:
  std::string where() const;

  std::string partition_key_;
  std::vector<MHz> clocks_;
  std::vector<int> comm_sms_;
  std::vector<std::string> slots_;
};

}  // namespace kareus::partition
