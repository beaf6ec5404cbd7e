// A GPU emulator: runs a compute stream and, optionally, one collective on a second stream that
// holds a given number of SMs, at a locked SM clock or under the default (power-limited)
// governor, and returns wall time and energy split into static and dynamic parts.
//
// Model (every constant comes from the GpuSpec, which names its sources; docs/emulator.md
// explains the forms and what they were checked against):
//  - a compute kernel takes max(math time, memory time) + launch overhead, and never less than
//    the host launch interval. Math time scales with the clock and with the waves of tiles its
//    SMs run (a partial last wave idles SMs; SMs taken by a collective add waves, W'/W);
//    memory time needs enough SMs to saturate HBM (NanoFlow GEMV curve) and is
//    clock-independent down to a knee;
//  - a collective on c CTAs moves bus bytes at a bandwidth linear in CTAs x clock that
//    saturates at the topology's ceiling, plus a fixed cost per call;
//  - while both run, each stretches: the compute kernel with the HBM traffic the collective
//    causes (2-3 HBM bytes per NVLink byte), more so when it is memory-bound; the collective
//    when it is latency-bound and with the traffic it moves. The overlap lasts as long as the
//    shorter stretched kernel; the rest runs alone;
//  - power = idle power at the clock + k x V(f)^2 x f x (active SMs) + uncore power while a
//    kernel runs + HBM traffic x energy per bit; a stretched kernel keeps its power. The power
//    limit caps every phase, locked or not, by lowering the clock.
#pragma once

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

struct RunResult {
  Seconds time;
  Joules dynamic_energy;
  Joules static_energy;
  // Integral of the SM clock over time (MHz x s), so that results add up and still give the
  // time-weighted average clock.
  double clock_seconds = 0;

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
  // Tiles a matrix-product kernel launches (split-K included); 0 for kernels without a shape.
  double launch_grid(const workload::Kernel& kernel) const;
  ComputeAlone compute_alone(const workload::Kernel& kernel, int sms, MHz f) const;
  // Seconds for the collective alone on `ctas` CTAs at f; `busbw` receives its bus bandwidth.
  double collective_alone(const workload::Kernel& comm, int ctas, MHz f,
                          double* busbw = nullptr) const;

 private:
  struct Phase;
  // W of one SM switching at full activity at clock f, and of HBM traffic at a byte rate.
  double active_sm_power(MHz f) const;
  double hbm_power(double bytes_per_second) const;
  // Dynamic power (W above idle) of a compute kernel run as `c`, and of a collective on `ctas`
  // CTAs lasting `duration` seconds.
  double compute_power(const ComputeAlone& c, const workload::Kernel& k, MHz f) const;
  double collective_power(const workload::Kernel& comm, int ctas, double duration, MHz f) const;
  Phase evaluate(const workload::Kernel* compute, const workload::Kernel* comm, int comm_sms,
                 MHz f) const;
  Phase evaluate_under(const workload::Kernel* compute, const workload::Kernel* comm, int comm_sms,
                       const ClockPolicy& policy) const;

  GpuSpec gpu_;
  EmulatorOptions options_;
  std::vector<MHz> governor_clocks_;  // ascending, up to clock_max
};

}  // namespace kareus::emulator
