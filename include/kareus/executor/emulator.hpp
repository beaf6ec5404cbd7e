// A GPU emulator: runs a compute stream and, optionally, one collective on a second stream that
// holds a given number of SMs, at a locked SM clock or under the default (power-limited)
// governor, and returns wall time and energy split into static and dynamic parts.
//
// Model (every constant comes from the GpuSpec, which names its sources):
//  - a compute kernel takes max(compute time, memory time) + launch overhead. Compute time
//    scales with clock x tensor throughput of the SMs it gets (NanoFlow GEMM-vs-SM curve);
//    memory time needs enough SMs to saturate HBM (NanoFlow GEMV curve) and is clock-independent
//    down to a knee;
//  - a collective on s SMs reaches a fraction of the bus-bandwidth ceiling that rises with s
//    (MSCCL++ blocks-vs-bandwidth), plus a latency term; standard volume factors per collective;
//  - concurrent kernels split the SMs (the collective's s SMs are taken from compute) and share
//    HBM bandwidth in proportion to their demand when it is oversubscribed;
//  - power = static + k x V(f)^2 x f x (SM activity) + HBM traffic x energy per bit; the default
//    governor runs each phase at the highest clock whose power fits the power limit.
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

 private:
  struct Phase;
  Phase evaluate(const workload::Kernel* compute, const workload::Kernel* comm, int comm_sms,
                 MHz f) const;
  Phase evaluate_under(const workload::Kernel* compute, const workload::Kernel* comm, int comm_sms,
                       const ClockPolicy& policy) const;

  GpuSpec gpu_;
  EmulatorOptions options_;
  std::vector<MHz> governor_clocks_;  // ascending, up to clock_max
};

}  // namespace kareus::emulator
