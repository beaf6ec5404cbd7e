// SPDX-License-Identifier: Apache-2.0
// Executors measure configurations of one partition: the emulator (default) or, later, real GPUs.
// The interface takes a batch so that an executor can order it to change the clock as rarely as
// possible (each change costs a settle time) and amortise the start-up of its worker processes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kareus/executor/emulator.hpp"
#include "kareus/executor/protocol.hpp"
#include "kareus/hardware/gpu_spec.hpp"
#include "kareus/partition/config_space.hpp"

namespace kareus::executor {

// One configuration's reading, per GPU and per partition run.
struct Measurement {
  Seconds time;
  Joules total_energy;
  Joules dynamic_energy;
  // GPU time the protocol spent on it: its wall time x the GPUs the measurement occupies.
  Seconds gpu_cost;
};

class Executor {
 public:
  virtual ~Executor() = default;
  // Part of the measurement store's key: "emulator", "cuda", ...
  virtual std::string name() const = 0;
  virtual const GpuSpec& gpu() const = 0;
  virtual const MeasurementProtocol& protocol() const = 0;
  // Measures every configuration of `p`; one result per configuration, in the order given.
  virtual std::vector<Measurement> measure(const partition::Partition& p,
                                           const std::vector<partition::ExecConfig>& configs) = 0;
  // Measures them again as their `repeat`-th sample (0 is measure()'s reading). On a real GPU
  // every run is a fresh sample, so this is measure(); an emulator seeds its noise with `repeat`
  // so that a repeat is an independent sample and still the same one in every run.
  virtual std::vector<Measurement> measure_repeat(const partition::Partition& p,
                                                  const std::vector<partition::ExecConfig>& configs,
                                                  std::size_t repeat) {
    static_cast<void>(repeat);
    return measure(p, configs);
  }
};

// GPUs a partition's measurement occupies: the group of its collective (TP-side partitions run on
// the TP GPUs, CP-side ones on the CP pair).
int measurement_gpus(const partition::Partition& p);

// Runs each configuration on the emulator through the protocol. With noise, every reading is
// drawn from a generator seeded by (noise_seed, partition key, config key, repeat index), so a
// configuration's n-th sample reads the same whatever the order or run in which it is measured
// (resume reproduces), and its repeats are independent samples.
class EmulatorExecutor : public Executor {
 public:
  explicit EmulatorExecutor(emulator::Emulator emulator, MeasurementProtocol protocol = {},
                            std::uint64_t noise_seed = 0);

  // "emulator", or "emulator(noise=0.03,seed=7)" with noise: noisy readings are stored apart.
  std::string name() const override;
  const GpuSpec& gpu() const override { return emulator_.gpu(); }
  const MeasurementProtocol& protocol() const override { return protocol_; }
  // Measures in descending clock order (one settle per clock), answers in the order given. Each
  // reading of a configuration draws its own noise, seeded by the configuration and the read's
  // index, as a real GPU reads differently every time: measure() takes each configuration's
  // next unread index, measure_repeat() the index it is given.
  std::vector<Measurement> measure(const partition::Partition& p,
                                   const std::vector<partition::ExecConfig>& configs) override;
  std::vector<Measurement> measure_repeat(const partition::Partition& p,
                                          const std::vector<partition::ExecConfig>& configs,
                                          std::size_t repeat) override;
  // Wall time the protocol has taken so far (drives the emulator's thermal drift).
  Seconds elapsed() const { return elapsed_; }

 private:
  emulator::Emulator emulator_;
  MeasurementProtocol protocol_;
  std::uint64_t noise_seed_;
  std::vector<Measurement> measure_reads(const partition::Partition& p,
                                         const std::vector<partition::ExecConfig>& configs,
                                         const std::vector<std::size_t>& reads);

  Seconds elapsed_{0.0};
  MHz locked_{0.0};  // clock currently locked; 0 before the first measurement
  std::map<std::string, std::size_t> next_read_;  // per "partition|config": reads taken
};

}  // namespace kareus::executor
