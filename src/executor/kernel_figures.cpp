// SPDX-License-Identifier: Apache-2.0
#include "kareus/executor/kernel_figures.hpp"

#include <fmt/format.h>

#include <charconv>

#include "kareus/core/csv.hpp"
#include "kareus/core/error.hpp"
#include "kareus/workload/kernels.hpp"

namespace kareus::executor {
namespace {

using emulator::ClockPolicy;
using workload::Kernel;

std::vector<double> numbers(const KernelFigure& f, char separator, std::size_t count) {
  std::vector<double> out;
  std::string_view rest = f.shape;
  while (!rest.empty()) {
    const std::size_t cut = rest.find(separator);
    const std::string_view part = rest.substr(0, cut);
    double v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size() || !(v > 0)) break;
    out.push_back(v);
    if (cut == std::string_view::npos) break;
    rest.remove_prefix(cut + 1);
  }
  if (out.size() != count && !(separator == ':' && out.size() == count - 1))
    throw Error::invalid(
        fmt::format("kernel figures line {}", f.line), "shape", f.shape,
        fmt::format("expected {} positive numbers separated by '{}'", count, separator));
  return out;
}

ClockPolicy policy_of(const KernelFigure& f, const GpuSpec& gpu) {
  if (f.clock == "default") return ClockPolicy::governor(gpu.power_limit_default);
  double mhz = 0;
  const auto [end, ec] = std::from_chars(f.clock.data(), f.clock.data() + f.clock.size(), mhz);
  if (ec != std::errc() || end != f.clock.data() + f.clock.size() || !gpu.supports_clock(MHz(mhz)))
    throw Error::invalid(fmt::format("kernel figures line {}", f.line), "clock", f.clock,
                         "expected 'default' or a supported clock of " + gpu.name);
  return ClockPolicy::locked_at(MHz(mhz));
}

workload::Collective collective_of(const std::string& kernel) {
  if (kernel == "allreduce") return workload::Collective::kAllReduce;
  if (kernel == "allgather") return workload::Collective::kAllGather;
  return workload::Collective::kReduceScatter;
}

double emulated_value(const emulator::Emulator& emu, const KernelFigure& f) {
  const GpuSpec& gpu = emu.gpu();
  const ClockPolicy policy = policy_of(f, gpu);
  Kernel k;
  if (f.kernel == "gemm") {
    const auto s = numbers(f, 'x', 3);
    k = workload::gemm_kernel("gemm", s[0], s[1], s[2]);
  } else if (f.kernel == "attention_fwd" || f.kernel == "attention_bwd") {
    const auto s = numbers(f, 'x', 4);
    k = workload::attention_kernel(s[0], s[2], s[2], s[1], s[1], s[3], f.kernel == "attention_bwd");
  } else if (f.kernel == "stream") {
    // A large copy-like kernel: the shape is the bytes it reads and writes.
    k = workload::memory_kernel("stream", workload::SlotClass::kNorm, numbers(f, 'x', 1)[0]);
  } else if (f.kernel == "allreduce" || f.kernel == "allgather" || f.kernel == "reducescatter") {
    const auto s = numbers(f, ':', 3);
    k = workload::collective_kernel(f.kernel, collective_of(f.kernel), s[0], static_cast<int>(s[1]),
                                    workload::Link::kNvlink);
    const int ctas = s.size() > 2 ? static_cast<int>(s[2]) : gpu.nccl_default_channels;
    const emulator::RunResult r = emu.run_sequential(std::span<const Kernel>(&k, 1), policy, ctas);
    if (f.metric == "busbw_gbps") return workload::bus_bytes(k) / r.time.value() / 1e9;
    // The bandwidth once the ring streams: without the fixed cost per call and the pipeline
    // fill, as a sweep that fits its time against the message size reports it.
    if (f.metric == "stream_busbw_gbps" && policy.mode == ClockPolicy::Mode::kLocked)
      return gpu.collective_busbw(ctas, policy.locked) / 1e9;
    if (f.metric == "power_w") return r.total_energy().value() / r.time.value();
  } else {
    throw Error::invalid(fmt::format("kernel figures line {}", f.line), "kernel", f.kernel,
                         "allowed: gemm, attention_fwd, attention_bwd, stream, allreduce, "
                         "allgather, reducescatter");
  }
  if (!k.is_collective()) {
    const emulator::RunResult r = emu.run_kernel(k, policy);
    if (f.metric == "tflops" && k.flops > 0) return k.flops / r.time.value() / 1e12;
    if (f.metric == "gbps") return k.bytes / r.time.value() / 1e9;
    if (f.metric == "power_w") return r.total_energy().value() / r.time.value();
  }
  throw Error::invalid(
      fmt::format("kernel figures line {}", f.line), "metric", f.metric,
      "allowed for " + f.kernel +
          (k.is_collective() ? ": busbw_gbps, stream_busbw_gbps (at a locked clock), power_w"
                             : (k.flops > 0 ? ": tflops, gbps, power_w" : ": gbps, power_w")));
}

}  // namespace

std::vector<KernelFigure> load_kernel_figures(const std::filesystem::path& csv) {
  const CsvTable table = CsvTable::read_file(csv);
  table.require_columns({"gpu", "kernel", "shape", "clock", "metric", "published", "source"});
  std::vector<KernelFigure> out;
  for (std::size_t i = 0; i < table.rows(); ++i) {
    const CsvRow row = table.row(i);
    KernelFigure f;
    f.gpu = row.text("gpu");
    f.kernel = row.text("kernel");
    f.shape = row.text("shape");
    f.clock = row.text("clock");
    f.metric = row.text("metric");
    f.published = row.positive_number("published");
    f.source = row.text("source");
    if (f.source.empty()) row.fail("source", "every figure needs its source");
    f.line = static_cast<int>(row.line());
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<KernelCheck> check_kernel_figures(const emulator::Emulator& emu,
                                              const std::vector<KernelFigure>& figures) {
  std::vector<KernelCheck> out;
  for (const KernelFigure& f : figures) {
    if (f.gpu != emu.gpu().name) continue;
    out.push_back({f, emulated_value(emu, f)});
  }
  return out;
}

}  // namespace kareus::executor
