// SPDX-License-Identifier: Apache-2.0
// kareus overlap: one compute kernel beside one collective, alone, back to back and overlapped,
// on the emulator (or measured with the CUDA executor where it is built).
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "common_flags.hpp"
#include "kareus/core/byte_size.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/printable.hpp"
#include "kareus/core/table.hpp"
#include "kareus/executor/overlap.hpp"
#include "kareus/hardware/gpu_file.hpp"
#include "kareus/hardware/gpu_spec.hpp"
#include "overlap_cuda.hpp"

namespace kareus::cli {
namespace {

using workload::Collective;
using workload::Kernel;

constexpr const char* kWhere = "command line";

struct OverlapFlags {
  std::string gpu;
  std::string gpu_file;
  std::string compute = "gemm";
  std::string shape;
  std::string dtype = "bf16";
  std::string collective = "allreduce";
  std::string bytes;
  int ranks = 8;
  int comm_sms = -1;  // unset: the GPU's NCCL channel count
  std::string sweep_sms;
  double clock_mhz = 0;
  std::string governor;
  std::string executor = "emulator";
  int device = 0;
  bool json = false;
};

// "8192x4096x2048" -> {8192, 4096, 2048}; every dimension a positive integer.
std::vector<double> parse_shape(const std::string& text, std::size_t dims, const char* layout) {
  std::vector<double> out;
  std::string_view rest = text;
  while (true) {
    const std::size_t x = rest.find('x');
    const std::string_view part = rest.substr(0, x);
    long long v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    require(ec == std::errc() && end == part.data() + part.size() && v > 0, kWhere, "--shape", text,
            fmt::format("expected {} positive integers as {}", dims, layout));
    out.push_back(static_cast<double>(v));
    if (x == std::string_view::npos) break;
    rest.remove_prefix(x + 1);
  }
  require(out.size() == dims, kWhere, "--shape", text,
          fmt::format("expected {} positive integers as {}", dims, layout));
  return out;
}

// The compute kernel and the bytes its operands hold in GPU memory (2 bytes an element).
struct Compute {
  Kernel kernel;
  double operand_bytes = 0;
};

Compute compute_kernel(const OverlapFlags& f) {
  require(f.dtype == "bf16" || f.dtype == "fp16", kWhere, "--dtype", f.dtype,
          "allowed: bf16, fp16 (the tensor-core rate the catalogue gives)");
  require(!f.shape.empty(), kWhere, "--shape", "", "required: the compute kernel's shape");
  if (f.compute == "gemm") {
    const auto s = parse_shape(f.shape, 3, "MxNxK");
    // A (M x K), B (K x N) and C (M x N).
    return {workload::gemm_kernel("gemm", s[0], s[1], s[2]),
            2 * (s[0] * s[2] + s[2] * s[1] + s[0] * s[1])};
  }
  if (f.compute == "attention") {
    const auto s = parse_shape(f.shape, 4, "BxHxSxD (batch, heads, sequence, head dim)");
    // Q, K, V and the output, each B x H x S x D.
    return {workload::attention_kernel(s[0], s[2], s[2], s[1], s[1], s[3], false),
            4 * 2 * s[0] * s[1] * s[2] * s[3]};
  }
  if (f.compute == "elementwise") {
    const auto s = parse_shape(f.shape, 1, "N (elements)");
    // A binary op such as a residual add: two inputs read, one output written.
    return {workload::memory_kernel("elementwise", workload::SlotClass::kNorm, 3 * 2 * s[0]),
            3 * 2 * s[0]};
  }
  throw Error::invalid(kWhere, "--compute", f.compute, "allowed: gemm, attention, elementwise");
}

// Both kernels run at once, so their buffers must fit in the GPU's memory together: a size
// beyond it describes no run, and would only make the emulator report nonsense.
void require_fits(const OverlapFlags& f, const GpuSpec& gpu, const Compute& compute,
                  double comm_bytes) {
  const double capacity = gpu.memory_capacity_gib * (1 << 30);
  const auto holds = [&] {
    return fmt::format("{} holds {:g} GiB", gpu.name, gpu.memory_capacity_gib);
  };
  require(comm_bytes <= capacity, kWhere, "--bytes", f.bytes,
          fmt::format("the collective's buffer must fit in GPU memory: {}", holds()));
  require(compute.operand_bytes <= capacity, kWhere, "--shape", f.shape,
          fmt::format("its operands take {:.4g} GiB ({}); {}", compute.operand_bytes / (1 << 30),
                      f.dtype, holds()));
  require(compute.operand_bytes + comm_bytes <= capacity, kWhere, "--shape", f.shape,
          fmt::format("its operands ({:.4g} GiB) and the collective's buffer ({:.4g} GiB) must fit "
                      "in GPU memory together: {}",
                      compute.operand_bytes / (1 << 30), comm_bytes / (1 << 30), holds()));
}

Kernel collective_kernel(const OverlapFlags& f) {
  Collective c;
  if (f.collective == "allreduce") {
    c = Collective::kAllReduce;
  } else if (f.collective == "allgather") {
    c = Collective::kAllGather;
  } else if (f.collective == "reducescatter") {
    c = Collective::kReduceScatter;
  } else {
    throw Error::invalid(kWhere, "--collective", f.collective,
                         "allowed: allreduce, allgather, reducescatter");
  }
  require(f.ranks >= 2 && f.ranks <= 1024, kWhere, "--ranks", std::to_string(f.ranks),
          "must be 2..1024 GPUs in the collective's group");
  require(!f.bytes.empty(), kWhere, "--bytes", "", "required: the collective's buffer size");
  return workload::collective_kernel(f.collective, c, parse_byte_size(f.bytes, kWhere, "--bytes"),
                                     f.ranks, workload::Link::kNvlink);
}

std::vector<int> sm_counts(const OverlapFlags& f, const GpuSpec& gpu) {
  const std::string allowed =
      fmt::format("SMs of the collective: 1..{} on {}", gpu.sm_count - 1, gpu.name);
  const auto check = [&](int sms, const char* field, const std::string& text) {
    require(sms >= 1 && sms < gpu.sm_count, kWhere, field, text, allowed);
  };
  if (f.sweep_sms.empty()) {
    const int sms = f.comm_sms == -1 ? gpu.nccl_default_channels : f.comm_sms;
    check(sms, "--comm-sms", std::to_string(sms));
    return {sms};
  }
  const std::size_t dots = f.sweep_sms.find("..");
  int lo = 0, hi = 0;
  const char* text = f.sweep_sms.c_str();
  const char* end = text + f.sweep_sms.size();
  const bool ok = dots != std::string::npos &&
                  std::from_chars(text, text + dots, lo).ptr == text + dots &&
                  std::from_chars(text + dots + 2, end, hi).ptr == end && lo <= hi;
  require(ok, kWhere, "--sweep-sms", f.sweep_sms, "expected FIRST..LAST, e.g. 1..32");
  check(lo, "--sweep-sms", f.sweep_sms);
  check(hi, "--sweep-sms", f.sweep_sms);
  std::vector<int> out;
  for (int s = lo; s <= hi; ++s) out.push_back(s);
  return out;
}

std::string fmt_optional(const std::optional<double>& v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : "-";
}

Json to_json(const executor::OverlapReport& r) {
  const auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  return {{"comm_sms", r.comm_sms},
          {"compute_alone_s", r.compute_alone.time.value()},
          {"collective_alone_s", r.collective_alone.time.value()},
          {"serial_s", r.serial.time.value()},
          {"overlapped_s", r.overlapped.time.value()},
          {"compute_stretch", opt(r.compute_stretch)},
          {"collective_stretch", opt(r.collective_stretch)},
          {"overlap_clock_mhz", r.overlap_clock ? Json(r.overlap_clock->value()) : Json(nullptr)},
          {"power_w",
           {{"compute_alone", r.compute_alone.power().value()},
            {"collective_alone", r.collective_alone.power().value()},
            {"serial", r.serial.power().value()},
            {"overlapped", r.overlapped.power().value()}}},
          {"energy_j",
           {{"compute_alone", r.compute_alone.energy.value()},
            {"collective_alone", r.collective_alone.energy.value()},
            {"serial", r.serial.energy.value()},
            {"overlapped", r.overlapped.energy.value()}}}};
}

std::string format_one(const executor::OverlapReport& r) {
  TextTable t({"run", "time ms", "power W", "energy J"});
  const auto row = [&](const char* name, const executor::RunFigures& x) {
    t.add_row({name, fmt::format("{:.3f}", to_milliseconds(x.time)),
               fmt::format("{:.0f}", x.power().value()), fmt::format("{:.3f}", x.energy.value())});
  };
  row("compute alone", r.compute_alone);
  row("collective alone", r.collective_alone);
  row("back to back", r.serial);
  row("overlapped", r.overlapped);
  std::string out = t.render();
  if (r.compute_stretch) {
    out += fmt::format(
        "\nwhile both run: compute x{:.2f}, collective x{:.2f} of their time alone, at {:g} MHz "
        "and {:.0f} W\n",
        *r.compute_stretch, *r.collective_stretch, r.overlap_clock->value(),
        r.overlap_power->value());
  }
  const auto change = [](double ratio) {
    return fmt::format("{:.1f} % {}", 100 * std::abs(1 - ratio), ratio <= 1 ? "less" : "more");
  };
  out += fmt::format("overlapped: {} time and {} energy than back to back\n",
                     change(r.overlapped.time / r.serial.time),
                     change(r.overlapped.energy / r.serial.energy));
  return out;
}

std::string format_sweep(const std::vector<executor::OverlapReport>& rows) {
  TextTable t({"comm SMs", "collective ms", "serial ms", "overlapped ms", "compute x",
               "collective x", "overlap W", "serial J", "overlapped J"});
  for (const auto& r : rows) {
    t.add_row({std::to_string(r.comm_sms),
               fmt::format("{:.3f}", to_milliseconds(r.collective_alone.time)),
               fmt::format("{:.3f}", to_milliseconds(r.serial.time)),
               fmt::format("{:.3f}", to_milliseconds(r.overlapped.time)),
               fmt_optional(r.compute_stretch, "{:.2f}"),
               fmt_optional(r.collective_stretch, "{:.2f}"),
               r.overlap_power ? fmt::format("{:.0f}", r.overlap_power->value())
                               : fmt::format("{:.0f}", r.overlapped.power().value()),
               fmt::format("{:.3f}", r.serial.energy.value()),
               fmt::format("{:.3f}", r.overlapped.energy.value())});
  }
  return fmt::format("compute alone {:.3f} ms\n",
                     to_milliseconds(rows.front().compute_alone.time)) +
         t.render();
}

void run(const OverlapFlags& f) {
  require(!f.gpu.empty() || !f.gpu_file.empty(), kWhere, "--gpu", "",
          "required: a GPU of `kareus gpus` (or --gpu-file)");
  require(f.gpu.empty() || f.gpu_file.empty(), kWhere, "--gpu-file", f.gpu_file,
          "give --gpu or --gpu-file, not both");
  const GpuSpec gpu =
      f.gpu_file.empty() ? load_gpu(f.gpu) : read_gpu_file(f.gpu_file, "--gpu-file").spec();
  const Compute operands = compute_kernel(f);
  const Kernel& compute = operands.kernel;
  const Kernel comm = collective_kernel(f);
  require_fits(f, gpu, operands, comm.comm_bytes);
  const std::vector<int> sms = sm_counts(f, gpu);
  require(f.executor == "emulator" || f.executor == "cuda", kWhere, "--executor", f.executor,
          "allowed: emulator, cuda");

  emulator::ClockPolicy policy = emulator::ClockPolicy::governor(gpu.power_limit_default);
  std::string clock_text =
      fmt::format("default governor (power limit {:g} W)", gpu.power_limit_default.value());
  if (!f.governor.empty()) {
    require(f.governor == "default", kWhere, "--governor", f.governor, "allowed: default");
  } else if (f.executor == "emulator") {
    const MHz clock = f.clock_mhz == 0 ? gpu.clock_max : MHz(f.clock_mhz);
    require(
        gpu.supports_clock(clock), kWhere, "--clock", format_number(f.clock_mhz),
        fmt::format("must be a supported clock of {}: {:g}..{:g} MHz in steps of {:g}", gpu.name,
                    gpu.clock_min.value(), gpu.clock_max.value(), gpu.clock_step.value()));
    policy = emulator::ClockPolicy::locked_at(clock);
    clock_text = fmt::format("clock locked at {:g} MHz", clock.value());
  }

  std::vector<executor::OverlapReport> reports;
  std::string executor_text = "emulator";
  if (f.executor == "cuda") {
    require(f.clock_mhz == 0, kWhere, "--clock", format_number(f.clock_mhz),
            "not with --executor cuda: a measurement runs at the GPU's current clock and never "
            "changes it");
    const CudaOverlapRun measured = measure_overlap_on_cuda(gpu, f.device, compute, comm, sms);
    reports = measured.reports;
    executor_text = measured.description;
    clock_text = measured.clock_text;
  } else {
    const emulator::Emulator emu(gpu);
    for (int s : sms) reports.push_back(executor::emulate_overlap(emu, compute, comm, s, policy));
  }

  if (f.json) {
    Json rows = Json::array();
    for (const auto& r : reports) rows.push_back(to_json(r));
    const Json doc{{"gpu", gpu.name},
                   {"compute",
                    {{"kind", f.compute},
                     {"shape", f.shape},
                     {"dtype", f.dtype},
                     {"flops", compute.flops},
                     {"hbm_bytes", compute.bytes}}},
                   {"collective",
                    {{"kind", f.collective},
                     {"bytes", comm.comm_bytes},
                     {"ranks", f.ranks},
                     {"bus_bytes", workload::bus_bytes(comm)}}},
                   {"clock", clock_text},
                   {"executor", executor_text},
                   {"results", rows}};
    std::cout << doc.dump(2) << "\n";
    return;
  }
  const std::string what =
      fmt::format("{} {} {} beside {} of {:g} MiB over {} ranks on {}, {}, {}", f.compute, f.shape,
                  f.dtype, f.collective, comm.comm_bytes / (1 << 20), f.ranks, printable(gpu.name),
                  clock_text, executor_text);
  std::cout << what << "\n\n"
            << (f.sweep_sms.empty() ? format_one(reports.front()) : format_sweep(reports));
}

}  // namespace

void register_overlap_command(CLI::App& app) {
  auto flags = std::make_shared<OverlapFlags>();
  auto* cmd = app.add_subcommand(
      "overlap",
      "What-if for one compute kernel beside one collective: alone, back to back, overlapped");
  cmd->add_option("--gpu", flags->gpu, "GPU type (kareus gpus)");
  cmd->add_option("--gpu-file", flags->gpu_file,
                  "GPU file instead (kareus calibrate writes one): a path, or a name in "
                  "$XDG_CONFIG_HOME/kareus/gpus");
  cmd->add_option("--compute", flags->compute, "gemm, attention or elementwise")
      ->capture_default_str();
  cmd->add_option("--shape", flags->shape,
                  "gemm: MxNxK; attention: BxHxSxD (batch, heads, sequence, head dim; causal); "
                  "elementwise: N elements (a binary op)");
  cmd->add_option("--dtype", flags->dtype, "bf16 or fp16")->capture_default_str();
  cmd->add_option("--collective", flags->collective, "allreduce, allgather or reducescatter")
      ->capture_default_str();
  cmd->add_option("--bytes", flags->bytes, "Collective buffer size, e.g. 67108864 or 64MiB");
  cmd->add_option("--ranks", flags->ranks, "GPUs in the collective's group")->capture_default_str();
  auto* sms = cmd->add_option("--comm-sms", flags->comm_sms,
                              "SMs of the collective (default: the GPU's NCCL channel count)");
  cmd->add_option("--sweep-sms", flags->sweep_sms, "A table over SM counts FIRST..LAST")
      ->excludes(sms);
  auto* clock = cmd->add_option("--clock", flags->clock_mhz,
                                "Locked SM clock in MHz (default: the GPU's maximum)");
  cmd->add_option("--governor", flags->governor,
                  "'default': unlocked clock throttled by the power limit")
      ->excludes(clock);
  cmd->add_option("--executor", flags->executor,
                  "emulator, or cuda to measure on this machine's GPU (needs a CUDA build)")
      ->capture_default_str();
  cmd->add_option("--device", flags->device, "CUDA device ordinal for --executor cuda")
      ->capture_default_str();
  add_json_flag(*cmd, flags->json);
  cmd->callback([flags] { run(*flags); });
}

}  // namespace kareus::cli
