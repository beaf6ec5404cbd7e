// SPDX-License-Identifier: Apache-2.0
#include "kareus/runtime/device_map.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cstdlib>

#include "kareus/core/error.hpp"
#include "kareus/nvml/nvml.hpp"

namespace kareus::runtime {
namespace {

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// The NVML index an entry names, or nullopt when it names none (CUDA stops the list there).
std::optional<unsigned> resolve(const std::string& entry, const std::vector<std::string>& uuids) {
  if (entry.empty()) return std::nullopt;
  if (all_digits(entry)) {
    if (entry.size() > 6) return std::nullopt;
    const unsigned index = static_cast<unsigned>(std::stoul(entry));
    if (index < uuids.size()) return index;
    return std::nullopt;
  }
  if (entry.starts_with("MIG-")) {
    throw Error::invalid("CUDA_VISIBLE_DEVICES", "entry", entry,
                         "a whole GPU (index or GPU- UUID): a MIG instance shares its parent "
                         "GPU's clocks, which Kareus does not set per instance");
  }
  // CUDA accepts any unique prefix of a UUID, with or without the "GPU-" prefix.
  const std::string wanted = entry.starts_with("GPU-") ? entry : "GPU-" + entry;
  std::optional<unsigned> match;
  for (unsigned i = 0; i < uuids.size(); ++i) {
    if (!uuids[i].starts_with(wanted)) continue;
    if (match) {
      throw Error::invalid(
          "CUDA_VISIBLE_DEVICES", "entry", entry,
          fmt::format("a unique UUID prefix; it matches {} and {}", uuids[*match], uuids[i]));
    }
    match = i;
  }
  return match;
}

}  // namespace

unsigned nvml_index_of_cuda_device(int cuda_index, const std::optional<std::string>& visible,
                                   const std::vector<std::string>& uuids) {
  if (cuda_index < 0)
    throw Error::invalid("gpu", "cuda device", std::to_string(cuda_index), "an index >= 0");
  std::vector<unsigned> devices;
  std::optional<std::string> stopped_at;  // the entry that names no GPU, where CUDA stops
  if (!visible) {
    for (unsigned i = 0; i < uuids.size(); ++i) devices.push_back(i);
  } else {
    std::size_t start = 0;
    while (start <= visible->size()) {
      const std::size_t comma = visible->find(',', start);
      const std::string entry = trim(
          visible->substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      const auto index = resolve(entry, uuids);
      if (!index) {
        stopped_at = entry;
        break;
      }
      devices.push_back(*index);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (static_cast<std::size_t>(cuda_index) >= devices.size()) {
    const std::string list = visible ? "\"" + *visible + "\"" : "(unset)";
    const std::string visible_part =
        devices.empty()
            ? "none"
            : fmt::format("{} (NVML device(s) {})", devices.size(), fmt::join(devices, ", "));
    const std::string why =
        stopped_at ? fmt::format(
                         "; its entry \"{}\" names no GPU of this machine (NVML devices 0..{}, "
                         "or their GPU- UUIDs), and CUDA ignores the list from there",
                         *stopped_at, static_cast<int>(uuids.size()) - 1)
                   : std::string();
    throw Error::invalid("gpu", "cuda device", std::to_string(cuda_index),
                         fmt::format("one of the CUDA devices CUDA_VISIBLE_DEVICES={} makes "
                                     "visible: {}{}",
                                     list, visible_part, why));
  }
  return devices[static_cast<std::size_t>(cuda_index)];
}

unsigned nvml_index_of_cuda_device(const nvml::Nvml& nvml, int cuda_index) {
  std::vector<std::string> uuids;
  const unsigned count = nvml.device_count();
  for (unsigned i = 0; i < count; ++i) uuids.push_back(nvml.uuid(i));
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return nvml_index_of_cuda_device(
      cuda_index, visible ? std::optional<std::string>(visible) : std::nullopt, uuids);
}

}  // namespace kareus::runtime
