// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kareus/core/error.hpp"
#include "kareus/executor/cuda_launch_plan.hpp"

namespace kareus::executor::cuda {
namespace {

using workload::Collective;
using workload::Kernel;
using workload::KernelKind;
using workload::SlotClass;

std::string where(const partition::Partition& p) {
  return fmt::format("partition {} (nanobatch {})", p.key.empty() ? "\"\"" : p.key, p.nanobatch);
}

std::int64_t dimension(double value, const partition::Partition& p, const Kernel& k,
                       const char* field) {
  const double rounded = std::round(value);
  require(rounded >= 1 && rounded <= 2147483647.0, where(p), fmt::format("{} {}", k.name, field),
          format_number(value), "a GEMM dimension must round to 1..2^31-1 (cuBLAS takes int)");
  return static_cast<std::int64_t>(rounded);
}

GemmLaunch gemm_launch(const partition::Partition& p, const Kernel& k) {
  GemmLaunch g;
  g.m = dimension(k.gemm_m, p, k, "gemm_m");
  g.n = dimension(k.gemm_n, p, k, "gemm_n");
  g.k = dimension(k.gemm_k, p, k, "gemm_k");
  g.batch = dimension(k.gemm_batch, p, k, "gemm_batch");
  const double product = 2.0 * k.gemm_m * k.gemm_n * k.gemm_k * k.gemm_batch;
  g.calls = std::max(1, static_cast<int>(std::lround(k.flops / product)));
  return g;
}

ElementwiseLaunch elementwise_launch(const Kernel& k) {
  ElementwiseLaunch e;
  switch (k.slot) {
    case SlotClass::kRope:
      e.op = ElementwiseOp::kRope;
      break;
    case SlotClass::kActivation:
      // A gated activation reads the gate and the up projection and writes their product.
      e.op = ElementwiseOp::kActivation;
      e.inputs = 2;
      break;
    default:
      e.op = ElementwiseOp::kNorm;
  }
  // The kernel's HBM traffic is what sets a memory-bound kernel's time and energy, so the
  // stream length is chosen to move exactly its bytes (rounded to whole bf16 pairs).
  const double pairs = k.bytes / (kBf16Bytes * 2.0 * (e.inputs + 1));
  e.elements = 2 * std::max<std::int64_t>(1, std::llround(pairs));
  return e;
}

template <class Size>
std::int64_t largest(const std::vector<ComputeLaunch>& compute, Size size) {
  std::int64_t out = 0;
  for (const auto& c : compute)
    if (c.gemm) out = std::max(out, size(*c.gemm));
  return out;
}

}  // namespace

std::int64_t LaunchPlan::max_gemm_a() const {
  return largest(compute, [](const GemmLaunch& g) { return g.m * g.k * g.batch; });
}

std::int64_t LaunchPlan::max_gemm_b() const {
  return largest(compute, [](const GemmLaunch& g) { return g.k * g.n * g.batch; });
}

std::int64_t LaunchPlan::max_gemm_c() const {
  return largest(compute, [](const GemmLaunch& g) { return g.m * g.n * g.batch; });
}

std::int64_t LaunchPlan::max_elementwise() const {
  std::int64_t out = 0;
  for (const auto& c : compute)
    if (c.elementwise) out = std::max(out, c.elementwise->elements);
  return out;
}

LaunchPlan plan_partition(const partition::Partition& p, const partition::ExecConfig& config,
                          int device_sms) {
  LaunchPlan plan;
  for (const Kernel& k : p.compute) {
    ComputeLaunch c;
    c.name = k.name;
    switch (k.kind) {
      case KernelKind::kGemm:
      case KernelKind::kAttention:
        c.gemm = gemm_launch(p, k);
        break;
      case KernelKind::kMemory:
        c.elementwise = elementwise_launch(k);
        break;
      case KernelKind::kCollective:
        throw Error::invalid(where(p), "compute kernel " + k.name, "collective",
                             "the compute segment of a partition holds no collective");
    }
    plan.compute.push_back(std::move(c));
  }
  if (!p.comm) return plan;

  const partition::LaunchSlot* slot = p.find_slot(config.slot);
  if (!slot) {
    std::string known;
    for (const auto& s : p.slots) known += (known.empty() ? "" : ", ") + s.name;
    throw Error::invalid(where(p), "slot", config.slot, "allowed: " + known);
  }
  require(config.comm_sms >= 1 && config.comm_sms < device_sms, where(p), "comm_sms",
          std::to_string(config.comm_sms),
          fmt::format("1..{} (the GPU has {} SMs and compute needs at least one)", device_sms - 1,
                      device_sms));
  // The copy loop moves 16-byte vectors; a collective's buffers are whole bf16 activations.
  const double bytes = workload::bus_bytes(*p.comm);
  plan.comm =
      CommLaunch{16 * std::max<std::int64_t>(1, std::llround(bytes / 16.0)), config.comm_sms};
  plan.launch_index = slot->op_index;
  return plan;
}

}  // namespace kareus::executor::cuda
