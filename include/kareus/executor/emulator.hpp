// SPDX-License-Identifier: Apache-2.0
// A GPU emulator: runs a compute stream and, optionally, one collective on a second stream that
// holds a given number of SMs, at a locked SM clock or under the default (power-limited)
// governor, and returns wall time and energy, split into where the energy went.
//
// Model (every constant comes from the GpuSpec, which names its sources; docs/emulator.md
// explains the forms and what they were checked against):
//  - a compute kernel takes max(math time, memory time) + launch overhead, and never less than
//    the host launch interval. Math time scales with the clock, with the waves of tiles its SMs
//    run (a partial last wave idles SMs; SMs taken by a collective add waves, W'/W) and with each
//    tile's fixed cost against its reduction length; memory time needs enough SMs to saturate
//    HBM and is clock-independent down to a knee;
//  - a collective on c CTAs moves bus bytes at a bandwidth linear in CTAs x clock that
//    saturates at the topology's ceiling, plus a fixed cost per call and the ring's pipeline fill;
//  - while both run, each stretches: the compute kernel with the HBM traffic the collective
//    causes (2-3 HBM bytes per NVLink byte), more so when it is memory-bound; the collective
//    when it is latency-bound and with the traffic it moves. The overlap lasts as long as the
//    shorter stretched kernel; the rest runs alone;
//  - power = idle power at the clock + a compute kernel's dynamic power (uncore, SMs held,
//    work done) + the collective's (its spinning CTAs and its traffic). A kernel stretched by
//    interference keeps the power of the SMs it holds but spreads its work energy over the
//    longer time. The power limit caps every phase, locked or not, by lowering the clock.
#pragma once

#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "kareus/core/rng.hpp"
#include "kareus/core/units.hpp"
#include "kareus/hardware/gpu_spec.hpp"
#include "kareus/workload/kernels.hpp"

namespace kareus::emulator {

struct ClockPolicy {
  enum class Mode { kLocked, kGovernor };
  Mode mode = Mode::kGovernor;
  MHz locked;         // kLocked
  Watts power_limit;  // kGovernor

  static ClockPolicy locked_at(MHz f) { return {Mode::kLocked, f, Watts(0)}; }
  static ClockPolicy governor(Watts limit) { return {Mode::kGovernor, MHz(0), limit}; }
};

// Where a run's time and board energy went. The energy parts add up to the board energy
// (RunResult::total_energy), the time parts to the run's time.
struct RunLedger {
  Joules idle;                // board power at the clock with nothing running, over the run
  Joules compute_dynamic;     // compute kernels above idle: uncore, SMs held, work
  Joules collective_dynamic;  // collectives above idle: their CTAs and their traffic
  Seconds compute_time;       // a compute kernel alone on the stream
  Seconds overlap_time;       // a compute kernel with a collective beside it
  Seconds collective_time;    // a collective alone (exposed communication)
  Seconds launch_gap_time;    // between kernels: launch overhead and the host launch path
  RunLedger& operator+=(const RunLedger& o);
};

struct RunResult {
  Seconds time;
  Joules dynamic_energy;
  Joules static_energy;
  // Integral of the SM clock over time (MHz x s), so that results add up and still give the
  // time-weighted average clock.
  double clock_seconds = 0;
  RunLedger ledger;

  Joules total_energy() const { return dynamic_energy + static_energy; }
  MHz average_clock() const { return MHz(time.value() > 0 ? clock_seconds / time.value() : 0); }
  Watts average_power() const { return total_energy() / time; }
  RunResult& operator+=(const RunResult& o);
};

// One partition: compute kernels in order on the compute stream; optionally a collective that
// is launched just before compute kernel `launch_index` (event-gated) on `comm_sms` SMs. The
// partition ends when both streams are done. launch_index == compute.size() launches the
// collective after the last compute kernel (fully exposed).
struct PartitionProgram {
  std::span<const workload::Kernel> compute;
  const workload::Kernel* comm = nullptr;
  int comm_sms = 0;
  int launch_index = 0;
};

struct EmulatorOptions {
  // Relative Gaussian noise on measured time and energy (0 = exact); seeded per measurement.
  double noise_sigma = 0.0;
  // Slow thermal drift: relative energy increase per hour of accumulated measurement time.
  double drift_per_hour = 0.0;
};

// One compute kernel on `held_sms` SMs with nothing beside it.
struct ComputeAlone {
  double math_time = 0;    // s of tensor/ALU work, waves included
  double memory_time = 0;  // s of HBM traffic
  double duration = 0;     // s, launch overhead and host floor included
  double busy_sms = 0;     // SMs doing math, averaged over the waves
  double held_sms = 0;
  // s the kernel runs: its duration less the gap before the next kernel can start.
  double active() const { return std::max(math_time, memory_time); }
};

// How a matrix product is launched: CTAs (one per output tile, split-K included) and the
// reduction length each CTA covers.
struct LaunchGrid {
  double ctas = 0;
  double k_per_cta = 0;
};

// The phase in which a compute kernel and a collective run together.
struct CoRun {
  MHz clock;                 // after the power limit
  Seconds compute_duration;  // the whole compute kernel under these conditions
  Seconds comm_duration;     // the whole collective under these conditions
  Watts power;               // board power
};

class Emulator {
 public:
  explicit Emulator(GpuSpec gpu, EmulatorOptions options = {});

  const GpuSpec& gpu() const { return gpu_; }
  const EmulatorOptions& options() const { return options_; }

  RunResult run_partition(const PartitionProgram& program, const ClockPolicy& policy) const;
  // Kernels one after another on one stream; collectives get `comm_sms` SMs (0 = the NCCL
  // default channel count) while compute waits.
  RunResult run_sequential(std::span<const workload::Kernel> kernels, const ClockPolicy& policy,
                           int comm_sms = 0) const;
  // A noisy, drifting reading of `exact` as a real measurement would give it. `elapsed` is the
  // measurement time accumulated so far (for drift).
  RunResult measure(const RunResult& exact, Rng& rng, Seconds elapsed) const;

  // Time of one kernel alone at clock f with `sms` SMs (diagnostics, tests, kernel DVFS).
  Seconds kernel_time(const workload::Kernel& kernel, MHz f, int sms) const;
  RunResult run_kernel(const workload::Kernel& kernel, const ClockPolicy& policy) const;
  // Both kernels sharing the GPU (the collective on `comm_sms` CTAs), under the policy.
  CoRun co_run(const workload::Kernel& compute, const workload::Kernel& comm, int comm_sms,
               const ClockPolicy& policy) const;

  // Model pieces, public for tests and what-if tools.
  // Tiles a matrix-product kernel launches (split-K included); no CTAs for kernels without a
  // shape.
  LaunchGrid launch_grid(const workload::Kernel& kernel) const;
  ComputeAlone compute_alone(const workload::Kernel& kernel, int sms, MHz f) const;
  // Achieved fraction of the datasheet tensor rate at the clock, before wave quantisation.
  double math_efficiency(const workload::Kernel& kernel, const LaunchGrid& grid) const;
  // Seconds for the collective alone on `ctas` CTAs at f; `busbw` receives its bus bandwidth.
  double collective_alone(const workload::Kernel& comm, int ctas, MHz f,
                          double* busbw = nullptr) const;

 private:
  struct Phase;
  // W of one SM switching at full activity at clock f, and of HBM traffic at a byte rate.
  double active_sm_power(MHz f) const;
  double hbm_power(double bytes_per_second) const;
  // Dynamic power (W above idle) of a compute kernel that runs as `whole` on the whole GPU,
  // holding `held_sms` SMs and stretched `stretch` times longer than that; and of a collective on
  // `ctas` CTAs, stretched likewise from its time alone, `alone` seconds.
  double compute_power(const ComputeAlone& whole, const workload::Kernel& k, MHz f, double held_sms,
                       double stretch) const;
  double collective_power(const workload::Kernel& comm, int ctas, double alone, double stretch,
                          MHz f) const;
  Phase evaluate(const workload::Kernel* compute, const workload::Kernel* comm, int comm_sms,
                 MHz f) const;
  Phase evaluate_under(const workload::Kernel* compute, const workload::Kernel* comm, int comm_sms,
                       const ClockPolicy& policy) const;

  GpuSpec gpu_;
  EmulatorOptions options_;
  std::vector<MHz> governor_clocks_;  // ascending, up to clock_max
};

}  // namespace kareus::emulator
