// SPDX-License-Identifier: Apache-2.0
// The emulator executor: the protocol's readings are built from the emulator's exact run of one
// partition (plus seeded noise), and its wall time is charged without being slept through.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "kareus/core/error.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/executor/executor.hpp"
#include "kareus/executor/instruction.hpp"

namespace kareus::executor {
namespace {

// FNV-1a: a hash that is the same on every platform and run, unlike std::hash, so a noise seed
// derived from a config key is stable across processes (resume reads the same noise).
std::uint64_t stable_hash(std::string_view text, std::uint64_t seed) {
  std::uint64_t h = 14695981039346656037ULL ^ seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace

int measurement_gpus(const partition::Partition& p) {
  return p.comm ? std::max(1, p.comm->group_size) : 1;
}

EmulatorExecutor::EmulatorExecutor(emulator::Emulator emulator, MeasurementProtocol protocol,
                                   std::uint64_t noise_seed)
    : emulator_(std::move(emulator)), protocol_(protocol), noise_seed_(noise_seed) {
  protocol_.validate();
}

std::string EmulatorExecutor::name() const {
  const double sigma = emulator_.options().noise_sigma;
  const double drift = emulator_.options().drift_per_hour;
  if (sigma == 0 && drift == 0) return "emulator";
  return fmt::format("emulator(noise={},drift={},seed={})", format_number(sigma),
                     format_number(drift), noise_seed_);
}

std::vector<Measurement> EmulatorExecutor::measure(
    const partition::Partition& p, const std::vector<partition::ExecConfig>& configs) {
  std::vector<std::size_t> reads;
  for (const auto& c : configs) reads.push_back(next_read_[p.key + "|" + c.key()]);
  return measure_reads(p, configs, reads);
}

std::vector<Measurement> EmulatorExecutor::measure_repeat(
    const partition::Partition& p, const std::vector<partition::ExecConfig>& configs,
    std::size_t repeat) {
  return measure_reads(p, configs, std::vector<std::size_t>(configs.size(), repeat));
}

std::vector<Measurement> EmulatorExecutor::measure_reads(
    const partition::Partition& p, const std::vector<partition::ExecConfig>& configs,
    const std::vector<std::size_t>& reads) {
  std::vector<std::size_t> order(configs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return configs[a].clock > configs[b].clock;
  });
  const int gpus = measurement_gpus(p);
  std::vector<Measurement> out(configs.size());
  for (std::size_t i : order) {
    const partition::ExecConfig& c = configs[i];
    const emulator::PartitionConfig config{c.slot, c.comm_sms};
    const emulator::RunResult exact = emulator::run_partition_with(
        emulator_, p, &config, emulator::ClockPolicy::locked_at(c.clock));
    // Read 0 keeps the seed it had before repeats existed, so stored readings stay valid.
    const std::string reading_key = p.key + "|" + c.key();
    const std::size_t read = reads[i];
    std::size_t& next = next_read_[reading_key];
    next = std::max(next, read + 1);
    const std::string sample = read == 0 ? reading_key : fmt::format("{}#{}", reading_key, read);
    Rng rng(stable_hash(sample, noise_seed_));
    const emulator::RunResult run = emulator_.measure(exact, rng, elapsed_);

    // The emulated GPUs of the group run the same partition; each rank reads the same values.
    WindowReading reading;
    reading.iterations = protocol_.window_iterations(run.time);
    const double n = static_cast<double>(reading.iterations);
    reading.rank_elapsed.assign(static_cast<std::size_t>(gpus), run.time * n);
    reading.rank_energy.assign(static_cast<std::size_t>(gpus), run.total_energy() * n);
    const ReducedReading r = reduce(reading, gpu().static_power);

    const Seconds wall = protocol_.wall_time(run.time, c.clock != locked_);
    locked_ = c.clock;
    elapsed_ += wall;
    out[i] = {r.time, r.total_energy, r.dynamic_energy, wall * static_cast<double>(gpus)};
  }
  return out;
}

}  // namespace kareus::executor
