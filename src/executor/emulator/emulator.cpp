#include "kareus/executor/emulator.hpp"

#include <algorithm>
#include <cmath>

#include "kareus/core/error.hpp"

namespace kareus::emulator {
namespace {

using workload::Kernel;
using workload::KernelKind;

// A collective reads its local data once and writes what it receives once per byte of
// algorithm volume [E], which is the HBM traffic it competes for.
constexpr double kCollectiveHbmBytesPerVolumeByte = 2.0;

}  // namespace

RunResult& RunResult::operator+=(const RunResult& o) {
  time += o.time;
  dynamic_energy += o.dynamic_energy;
  static_energy += o.static_energy;
  clock_seconds += o.clock_seconds;
  return *this;
}

// Duration of each active kernel in this phase (as if the phase lasted the whole kernel) and
// the power drawn while it lasts.
struct Emulator::Phase {
  MHz clock;
  double compute_duration = 0;  // s for the whole compute kernel at this phase's conditions
  double comm_duration = 0;     // s for the whole collective
  double dynamic_power = 0;     // W
};

Emulator::Emulator(GpuSpec gpu, EmulatorOptions options)
    : gpu_(std::move(gpu)), options_(options), governor_clocks_(gpu_.supported_clocks()) {}

Emulator::Phase Emulator::evaluate(const Kernel* compute, const Kernel* comm, int comm_sms,
                                   MHz f) const {
  const GpuSpec& g = gpu_;
  const double total_sms = g.sm_count;
  // SMs held by a collective (or reserved by the caller) are unavailable to compute.
  const double compute_sms = std::max(1.0, total_sms - comm_sms);
  const double sm_fraction = compute_sms / total_sms;
  const double clock_factor =
      std::min(1.0, f.value() / (g.memory_clock_knee_fraction * g.clock_max.value()));
  const double hbm = g.memory_bandwidth_gbps * 1e9 * g.memory_efficiency * clock_factor;

  Phase p;
  p.clock = f;
  double compute_time = 0;  // tensor/ALU-bound part
  double mem_demand = 0;    // B/s the compute kernel would pull from HBM alone
  double compute_alone = 0;
  if (compute) {
    if (compute->flops > 0) {
      double eff = g.gemm_efficiency;
      if (compute->kind == KernelKind::kAttention)
        eff = compute->backward ? g.attention_backward_efficiency : g.attention_forward_efficiency;
      const double peak =
          g.peak_bf16_dense_tflops * 1e12 * f.value() / g.peak_reference_clock.value();
      compute_time = compute->flops / (peak * eff * g.gemm_sm_scaling(sm_fraction));
    }
    const double mem_time = compute->bytes / (hbm * g.memory_sm_scaling(sm_fraction));
    compute_alone = std::max(compute_time, mem_time);
    mem_demand = compute_alone > 0 ? compute->bytes / compute_alone : 0;
  }
  double comm_alone = 0;
  double comm_demand = 0;
  if (comm) {
    const double bw = comm->link == workload::Link::kScaleOut
                          ? g.scale_out_bandwidth_per_gpu_gbps * 1e9
                          : g.collective_busbw_ceiling_gbps * 1e9 *
                                g.collective_sm_scaling(static_cast<double>(comm_sms));
    const double volume = workload::bus_bytes(*comm);
    comm_alone = g.collective_latency.value() + volume / std::max(bw, 1.0);
    comm_demand = kCollectiveHbmBytesPerVolumeByte * volume / comm_alone;
  }
  // HBM oversubscription stretches both kernels' memory-bound work alike.
  const double contention = std::max(1.0, (mem_demand + comm_demand) / hbm);
  if (compute) {
    const double mem_time = compute_alone > compute_time ? compute_alone : 0;
    p.compute_duration =
        std::max(compute_time, mem_time * contention) + g.kernel_launch_overhead.value();
  }
  if (comm) p.comm_duration = comm_alone * (comm_demand > 0 ? contention : 1.0);

  // Dynamic power: SM switching power ~ V^2 f per active SM, plus HBM traffic.
  const double v = g.voltage(f);
  const double per_sm_full = g.dynamic_power_coefficient * v * v * (f.value() / 1000.0) / total_sms;
  double sm_power = 0;
  double hbm_rate = 0;
  if (compute) {
    // Tensor-core switching energy follows the work done, not the SMs holding it: a GEMM on
    // 80 of 108 SMs still delivers 97 % of the throughput (NanoFlow) and draws about as much.
    // The rest of the time the SMs it holds mostly move data.
    const double busy = compute->flops > 0 ? compute_time / p.compute_duration : 0.0;
    sm_power += per_sm_full * total_sms * busy * g.gemm_sm_scaling(sm_fraction) +
                per_sm_full * compute_sms * (1.0 - busy) * g.data_movement_sm_activity;
    hbm_rate += compute->bytes / p.compute_duration;
  }
  if (comm) {
    sm_power += per_sm_full * comm_sms * g.data_movement_sm_activity;
    hbm_rate += kCollectiveHbmBytesPerVolumeByte * workload::bus_bytes(*comm) / p.comm_duration;
  }
  p.dynamic_power = sm_power + hbm_rate * 8.0 * g.memory_access_energy_pj_per_bit * 1e-12;
  return p;
}

Emulator::Phase Emulator::evaluate_under(const Kernel* compute, const Kernel* comm, int comm_sms,
                                         const ClockPolicy& policy) const {
  // A locked clock is an upper bound: the power limit still throttles below it, as on real
  // GPUs (GEMMs at 1410 MHz on A100 sit under the 400 W cap, gpu-physics-anchors C4). The
  // default governor boosts up to the maximum clock under the same rule.
  const MHz ceiling = policy.mode == ClockPolicy::Mode::kLocked ? policy.locked : gpu_.clock_max;
  const Watts limit =
      policy.mode == ClockPolicy::Mode::kLocked ? gpu_.power_limit_default : policy.power_limit;
  const double budget = limit.value() - gpu_.static_power.value();
  Phase top = evaluate(compute, comm, comm_sms, ceiling);
  if (top.dynamic_power <= budget) return top;
  // Power rises with the clock, so a binary search over the supported clocks below the
  // ceiling finds the highest one that fits.
  const auto end = std::upper_bound(governor_clocks_.begin(), governor_clocks_.end(), ceiling);
  std::size_t lo = 0;
  std::size_t hi = static_cast<std::size_t>(end - governor_clocks_.begin());
  if (hi == 0) return top;
  Phase best = evaluate(compute, comm, comm_sms, governor_clocks_[lo]);
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    Phase p = evaluate(compute, comm, comm_sms, governor_clocks_[mid]);
    if (p.dynamic_power <= budget) {
      lo = mid;
      best = p;
    } else {
      hi = mid;
    }
  }
  return best;
}

RunResult Emulator::run_partition(const PartitionProgram& program,
                                  const ClockPolicy& policy) const {
  const std::size_t n = program.compute.size();
  if (program.comm &&
      (program.launch_index < 0 || static_cast<std::size_t>(program.launch_index) > n))
    throw Error("internal: partition launch index out of range");
  if (program.comm && program.comm->link == workload::Link::kNvlink && program.comm_sms < 1)
    throw Error("internal: a collective needs at least one SM");
  const double static_w = gpu_.static_power.value();
  double t = 0, dyn = 0, clock_s = 0;
  double comm_left = program.comm ? 1.0 : 0.0;  // fraction of the collective still to run
  bool comm_running = false;
  auto advance = [&](const Phase& p, double dt) {
    t += dt;
    dyn += p.dynamic_power * dt;
    clock_s += p.clock.value() * dt;
  };
  for (std::size_t i = 0; i <= n; ++i) {
    if (program.comm && static_cast<std::size_t>(program.launch_index) == i) comm_running = true;
    if (i == n) break;
    const Kernel* k = &program.compute[i];
    double left = 1.0;
    while (left > 0) {
      if (comm_running && comm_left > 0) {
        const Phase p = evaluate_under(k, program.comm, program.comm_sms, policy);
        const double dt = std::min(left * p.compute_duration, comm_left * p.comm_duration);
        advance(p, dt);
        left = std::max(0.0, left - dt / p.compute_duration);
        comm_left = std::max(0.0, comm_left - dt / p.comm_duration);
        if (left < 1e-12) left = 0;
        if (comm_left < 1e-12) comm_left = 0;
      } else {
        const Phase p = evaluate_under(k, nullptr, 0, policy);
        advance(p, left * p.compute_duration);
        left = 0;
      }
    }
  }
  if (comm_left > 0) {
    const Phase p = evaluate_under(nullptr, program.comm, program.comm_sms, policy);
    advance(p, comm_left * p.comm_duration);
  }
  RunResult r;
  r.time = Seconds(t);
  r.dynamic_energy = Joules(dyn);
  r.static_energy = Joules(static_w * t);
  r.clock_seconds = clock_s;
  return r;
}

RunResult Emulator::run_sequential(std::span<const Kernel> kernels, const ClockPolicy& policy,
                                   int comm_sms) const {
  const int sms = comm_sms > 0 ? comm_sms : gpu_.nccl_default_channels;
  RunResult total;
  for (const Kernel& k : kernels) {
    PartitionProgram p;
    if (k.is_collective()) {
      p.comm = &k;
      p.comm_sms = sms;
      p.launch_index = 0;
    } else {
      p.compute = std::span<const Kernel>(&k, 1);
    }
    total += run_partition(p, policy);
  }
  return total;
}

RunResult Emulator::run_kernel(const Kernel& kernel, const ClockPolicy& policy) const {
  return run_sequential(std::span<const Kernel>(&kernel, 1), policy);
}

Seconds Emulator::kernel_time(const Kernel& kernel, MHz f, int sms) const {
  if (kernel.is_collective()) return Seconds(evaluate(nullptr, &kernel, sms, f).comm_duration);
  return Seconds(evaluate(&kernel, nullptr, gpu_.sm_count - sms, f).compute_duration);
}

RunResult Emulator::measure(const RunResult& exact, Rng& rng, Seconds elapsed) const {
  RunResult r = exact;
  const double drift = 1.0 + options_.drift_per_hour * to_hours(elapsed);
  const double time_noise = options_.noise_sigma > 0 ? rng.normal(1.0, options_.noise_sigma) : 1.0;
  const double energy_noise =
      options_.noise_sigma > 0 ? rng.normal(1.0, options_.noise_sigma) : 1.0;
  r.time = exact.time * std::max(0.5, time_noise);
  r.static_energy = gpu_.static_power * r.time;
  r.dynamic_energy = exact.dynamic_energy * std::max(0.5, energy_noise) * drift;
  r.clock_seconds = exact.clock_seconds * (r.time / exact.time);
  return r;
}

}  // namespace kareus::emulator
