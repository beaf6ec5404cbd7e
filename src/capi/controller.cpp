// SPDX-License-Identifier: Apache-2.0
// The frequency controller through the C API, on NVML in this process or on kareusd.
#include "handles.hpp"
#include "kareus/runtime/daemon_client.hpp"
#include "status.hpp"

namespace kareus::capi {
namespace {

kareus::runtime::FrequencyController& controller_of(const kareus_controller* c) {
  return *required(c, "controller")->controller;
}

std::unique_ptr<runtime::ClockBackend> backend_of(const kareus_controller_options& o) {
  if (o.daemon_socket)
    return std::make_unique<runtime::DaemonClockBackend>(
        std::make_shared<runtime::DaemonClient>(o.daemon_socket), o.gpu);
  return std::make_unique<runtime::NvmlClockBackend>(std::make_shared<const nvml::Nvml>(), o.gpu);
}

}  // namespace
}  // namespace kareus::capi

using namespace kareus;
using namespace kareus::capi;

extern "C" {

void kareus_controller_options_init(kareus_controller_options* options) {
  if (!options) return;
  *options = kareus_controller_options{};
  const runtime::ControllerOptions defaults;
  options->restore_on_signals = defaults.restore_on_signals ? 1 : 0;
  options->check_gpu_model = defaults.check_gpu_model ? 1 : 0;
  options->partition_clocks = defaults.partition_clocks ? 1 : 0;
}

kareus_status kareus_controller_create(const kareus_schedule* schedule, int stage,
                                       const kareus_controller_options* options,
                                       kareus_controller** out) {
  return guarded([&] {
    required(out, "out");
    required(schedule, "schedule");
    kareus_controller_options o;
    kareus_controller_options_init(&o);
    if (options) o = *options;
    runtime::ControllerOptions co;
    co.restore_on_signals = o.restore_on_signals != 0;
    co.job.pipeline_stages = o.pipeline_stages;
    co.job.microbatches = o.microbatches;
    co.check_gpu_model = o.check_gpu_model != 0;
    co.partition_clocks = o.partition_clocks != 0;
    co.lock_memory_clock = o.lock_memory_clock != 0;
    if (o.record_path)
      co.record = runtime::RecordOptions{o.record_path, o.rank, o.gpu, nullptr, {}};
    auto c = std::make_unique<kareus_controller>();
    c->controller = std::make_unique<runtime::FrequencyController>(schedule->schedule, stage,
                                                                   backend_of(o), co);
    *out = c.release();
  });
}

void kareus_controller_free(kareus_controller* controller) {
  delete controller;
}

kareus_status kareus_controller_instruction_begin(kareus_controller* controller, int stage,
                                                  int microbatch, const char* direction) {
  return guarded([&] {
    controller_of(controller)
        .on_instruction_begin(stage, microbatch, required(direction, "direction"));
  });
}

kareus_status kareus_controller_instruction_step(kareus_controller* controller, int step) {
  return guarded([&] { controller_of(controller).on_instruction_step(step); });
}

kareus_status kareus_controller_instruction_end(kareus_controller* controller) {
  return guarded([&] { controller_of(controller).on_instruction_end(); });
}

kareus_status kareus_controller_step_end(kareus_controller* controller) {
  return guarded([&] { controller_of(controller).on_step_end(); });
}

kareus_status kareus_controller_wait(kareus_controller* controller) {
  return guarded([&] { controller_of(controller).wait_until_applied(); });
}

kareus_status kareus_controller_restore(kareus_controller* controller) {
  return guarded([&] { controller_of(controller).restore_default_clocks(); });
}

kareus_status kareus_controller_get_stats(const kareus_controller* controller,
                                          kareus_controller_stats* stats) {
  return guarded([&] {
    required(stats, "stats");
    const auto s = controller_of(controller).stats();
    *stats = {s.instructions, s.clock_changes, s.skipped};
  });
}

}  // extern "C"
