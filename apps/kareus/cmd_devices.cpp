// SPDX-License-Identifier: Apache-2.0
// kareus devices: the local GPUs as NVML sees them, the nvidia-smi habit before planning or
// running a schedule. Reads only; never changes a setting.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>

#include "commands.hpp"
#include "common_flags.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/printable.hpp"
#include "kareus/core/table.hpp"
#include "kareus/hardware/gpu_spec.hpp"
#include "kareus/nvml/nvml.hpp"

namespace kareus::cli {
namespace {

struct Device {
  unsigned index = 0;
  std::string name;
  std::string uuid;
  std::string catalogue;  // data/gpus entry whose display name NVML reports, or ""
  MHz sm_clock;
  std::vector<MHz> sm_clocks;  // highest first
  Watts power_limit;
  nvml::PowerLimitRange power_limit_range;
  bool energy_counter = false;
  std::string energy_counter_note;
};

// Catalogue entries by the name NVML reports for them (their display_name).
std::map<std::string, std::string> catalogue_by_nvml_name() {
  std::map<std::string, std::string> out;
  for (const auto& name : list_gpus()) out.emplace(load_gpu(name).display_name, name);
  return out;
}

Device read_device(const nvml::Nvml& nvml, unsigned i,
                   const std::map<std::string, std::string>& catalogue) {
  Device d;
  d.index = i;
  d.name = nvml.name(i);
  d.uuid = nvml.uuid(i);
  if (auto it = catalogue.find(d.name); it != catalogue.end()) d.catalogue = it->second;
  d.sm_clock = nvml.sm_clock(i);
  d.sm_clocks = nvml.supported_sm_clocks(i);
  d.power_limit = nvml.power_limit(i);
  d.power_limit_range = nvml.power_limit_constraints(i);
  try {
    nvml.total_energy(i);
    d.energy_counter = true;
  } catch (const nvml::NvmlError& e) {
    // Pre-Volta GPUs have no energy counter; Kareus then cannot measure energy on them.
    d.energy_counter_note = e.what();
  }
  return d;
}

Json to_json(const Device& d) {
  Json clocks = Json::array();
  for (MHz f : d.sm_clocks) clocks.push_back(f.value());
  return {{"index", d.index},
          {"name", d.name},
          {"uuid", d.uuid},
          {"catalogue_gpu", d.catalogue.empty() ? Json(nullptr) : Json(d.catalogue)},
          {"sm_clock_mhz", d.sm_clock.value()},
          {"supported_sm_clocks_mhz", clocks},
          {"power_limit_w", d.power_limit.value()},
          {"power_limit_min_w", d.power_limit_range.min.value()},
          {"power_limit_max_w", d.power_limit_range.max.value()},
          {"energy_counter", d.energy_counter}};
}

std::string format_text(const std::vector<Device>& devices) {
  if (devices.empty()) return "no NVIDIA GPU found by NVML\n";
  TextTable t({"index", "name", "uuid", "catalogue", "SM MHz now", "SM clocks MHz", "power limit W",
               "energy counter"});
  for (const Device& d : devices) {
    const std::string clocks = d.sm_clocks.empty()
                                   ? "-"
                                   : fmt::format("{:g}..{:g} ({})", d.sm_clocks.back().value(),
                                                 d.sm_clocks.front().value(), d.sm_clocks.size());
    t.add_row({std::to_string(d.index), d.name, d.uuid, d.catalogue.empty() ? "-" : d.catalogue,
               fmt::format("{:g}", d.sm_clock.value()), clocks,
               fmt::format("{:g} ({:g}..{:g})", d.power_limit.value(),
                           d.power_limit_range.min.value(), d.power_limit_range.max.value()),
               d.energy_counter ? "yes" : "no"});
  }
  std::string out = t.render();
  for (const Device& d : devices) {
    if (d.catalogue.empty())
      out += fmt::format("GPU {}: no entry in the catalogue (kareus gpus) for \"{}\"\n", d.index,
                         printable(d.name));
    if (!d.energy_counter)
      out += fmt::format("GPU {}: no energy counter ({})\n", d.index,
                         printable(d.energy_counter_note));
  }
  return out;
}

}  // namespace

void register_devices_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "devices", "The local NVIDIA GPUs through NVML: clocks, power limits, energy counter");
  add_json_flag(*cmd, *json);
  cmd->callback([json] {
    const nvml::Nvml nvml;
    const auto catalogue = catalogue_by_nvml_name();
    std::vector<Device> devices;
    for (unsigned i = 0; i < nvml.device_count(); ++i)
      devices.push_back(read_device(nvml, i, catalogue));
    if (*json) {
      Json list = Json::array();
      for (const Device& d : devices) list.push_back(to_json(d));
      std::cout << Json{{"nvml_library", nvml::nvml_library_path()}, {"devices", list}}.dump(2)
                << "\n";
    } else {
      std::cout << format_text(devices);
    }
  });
}

}  // namespace kareus::cli
