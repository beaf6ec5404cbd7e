// SPDX-License-Identifier: Apache-2.0
// The energy monitor through the C API.
#include "handles.hpp"
#include "status.hpp"

using namespace kareus;
using namespace kareus::capi;

extern "C" {

void kareus_monitor_options_init(kareus_monitor_options* options) {
  if (!options) return;
  options->power_sample_interval_s = runtime::EnergyMonitorOptions{}.power_sample_interval.value();
}

kareus_status kareus_monitor_create(const unsigned* gpus, size_t gpu_count,
                                    const kareus_monitor_options* options, kareus_monitor** out) {
  return guarded([&] {
    required(out, "out");
    if (gpu_count > 0) required(gpus, "gpus");
    kareus_monitor_options o;
    kareus_monitor_options_init(&o);
    if (options) o = *options;
    runtime::EnergyMonitorOptions mo;
    mo.power_sample_interval = Seconds(o.power_sample_interval_s);
    auto m = std::make_unique<kareus_monitor>();
    m->monitor = std::make_unique<runtime::EnergyMonitor>(
        std::make_shared<const nvml::Nvml>(), std::vector<unsigned>(gpus, gpus + gpu_count), mo);
    m->gpu_count = gpu_count;
    *out = m.release();
  });
}

void kareus_monitor_free(kareus_monitor* monitor) {
  delete monitor;
}

kareus_status kareus_monitor_begin_window(kareus_monitor* monitor, const char* name) {
  return guarded(
      [&] { required(monitor, "monitor")->monitor->begin_window(required(name, "name")); });
}

kareus_status kareus_monitor_end_window(kareus_monitor* monitor, const char* name,
                                        kareus_measurement* measurement, double* gpu_energy_j,
                                        size_t gpu_energy_capacity) {
  return guarded([&] {
    required(monitor, "monitor");
    required(name, "name");
    required(measurement, "measurement");
    if (gpu_energy_j && gpu_energy_capacity < monitor->gpu_count)
      throw ArgumentError("gpu_energy_capacity = " + std::to_string(gpu_energy_capacity) +
                          " is below the monitor's " + std::to_string(monitor->gpu_count) +
                          " GPUs");
    const auto m = monitor->monitor->end_window(name);
    *measurement = {m.time.value(), m.total_energy.value()};
    if (gpu_energy_j)
      for (std::size_t i = 0; i < m.gpu_energy.size(); ++i)
        gpu_energy_j[i] = m.gpu_energy[i].value();
  });
}

}  // extern "C"
