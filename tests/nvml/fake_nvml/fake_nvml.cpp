// SPDX-License-Identifier: Apache-2.0
// A stand-in for libnvidia-ml.so.1 for machines without a GPU, scripted from the JSON file named by
// $KAREUS_FAKE_NVML_SCRIPT (format in tests/nvml/fake_nvml/README.md). It exports the same symbols
// as the driver's library (checked against kareus/nvml/nvml_api.h), advances each device's energy
// counter with wall time x a linear power model of the current SM clock, returns injected error
// codes, and appends every successful clock setter to $KAREUS_FAKE_NVML_LOG, one line per call, so
// that tests in any process (controller, daemon, Python) can check the exact sequence. A device
// with "time": "emulated" keeps its own clock instead: only kareusFakeNvmlRunWork, which a stand-in
// training job calls with what the emulator says the work took, advances its time and energy.
#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kareus/nvml/nvml_api.h"

struct nvmlDevice_st {
  std::string name;
  std::string uuid;
  unsigned default_clock = 0;
  std::map<unsigned, std::vector<unsigned>> graphics_clocks;  // by memory clock
  double idle_w = 0;
  double w_per_mhz = 0;
  unsigned power_limit_mw = 0;
  unsigned power_limit_min_mw = 0;
  unsigned power_limit_max_mw = 0;
  std::map<std::string, int> errors;
  unsigned locked_clock = 0;  // 0 = not locked
  double energy_mj = 0;
  std::chrono::steady_clock::time_point last_update;
  // "time": "emulated": seconds of work run so far, the last work's average power and clock (0:
  // none since the last clock setter).
  bool emulated = false;
  double emulated_s = 0;
  double work_w = 0;
  unsigned work_clock = 0;
};

namespace {

struct State {
  std::mutex mutex;
  int init_count = 0;
  std::map<std::string, int> errors;
  std::vector<nvmlDevice_st> devices;
  std::string driver_version;
};

State& state() {
  static State s;
  return s;
}

const std::map<std::string, int>& error_codes() {
  static const std::map<std::string, int> codes = {
      {"UNINITIALIZED", NVML_ERROR_UNINITIALIZED},
      {"INVALID_ARGUMENT", NVML_ERROR_INVALID_ARGUMENT},
      {"NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED},
      {"NO_PERMISSION", NVML_ERROR_NO_PERMISSION},
      {"NOT_FOUND", NVML_ERROR_NOT_FOUND},
      {"INSUFFICIENT_SIZE", NVML_ERROR_INSUFFICIENT_SIZE},
      {"DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED},
      {"TIMEOUT", NVML_ERROR_TIMEOUT},
      {"GPU_IS_LOST", NVML_ERROR_GPU_IS_LOST},
      {"NO_DATA", NVML_ERROR_NO_DATA},
      {"UNKNOWN", NVML_ERROR_UNKNOWN}};
  return codes;
}

std::map<std::string, int> parse_errors(const nlohmann::json& object) {
  std::map<std::string, int> out;
  for (const auto& [function, code] : object.items()) {
    out[function] =
        code.is_number_integer() ? code.get<int>() : error_codes().at(code.get<std::string>());
  }
  return out;
}

unsigned milli(const nlohmann::json& device, const char* key, double fallback) {
  return static_cast<unsigned>(device.value(key, fallback) * 1000.0 + 0.5);
}

bool load_script() {
  const char* path = std::getenv("KAREUS_FAKE_NVML_SCRIPT");
  if (!path) {
    std::fprintf(stderr, "fake NVML: KAREUS_FAKE_NVML_SCRIPT is not set\n");
    return false;
  }
  try {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open file");
    const nlohmann::json script = nlohmann::json::parse(in);
    State& s = state();
    s.errors = parse_errors(script.value("errors", nlohmann::json::object()));
    s.driver_version = script.value("driver_version", "fake");
    s.devices.clear();
    for (const auto& d : script.at("devices")) {
      nvmlDevice_st dev;
      dev.name = d.at("name").get<std::string>();
      dev.uuid = d.value("uuid", "GPU-fake-" + std::to_string(s.devices.size()));
      for (const auto& [memory, clocks] : d.at("graphics_clocks_mhz").items()) {
        dev.graphics_clocks[static_cast<unsigned>(std::stoul(memory))] =
            clocks.get<std::vector<unsigned>>();
      }
      dev.default_clock = d.at("default_sm_clock_mhz").get<unsigned>();
      dev.idle_w = d.at("power_model").at("idle_w").get<double>();
      dev.w_per_mhz = d.at("power_model").at("w_per_mhz").get<double>();
      dev.power_limit_mw = milli(d, "power_limit_w", 400);
      dev.power_limit_min_mw = milli(d, "power_limit_min_w", 100);
      dev.power_limit_max_mw = milli(d, "power_limit_max_w", 400);
      dev.errors = parse_errors(d.value("errors", nlohmann::json::object()));
      dev.energy_mj = d.value("initial_energy_j", 0.0) * 1000.0;
      const std::string time = d.value("time", "wall");
      if (time != "wall" && time != "emulated")
        throw std::runtime_error("time must be \"wall\" or \"emulated\"");
      dev.emulated = time == "emulated";
      dev.last_update = std::chrono::steady_clock::now();
      s.devices.push_back(std::move(dev));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake NVML: %s: %s\n", path, e.what());
    return false;
  }
  return true;
}

void append_log(const std::string& line) {
  const char* path = std::getenv("KAREUS_FAKE_NVML_LOG");
  if (!path) return;
  // O_APPEND with one write() per line keeps lines whole when several processes log at once.
  const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const std::string text = line + "\n";
  const ssize_t written = write(fd, text.data(), text.size());
  (void)written;
  close(fd);
}

unsigned current_clock(const nvmlDevice_st& d) {
  if (d.work_clock) return d.work_clock;
  return d.locked_clock ? d.locked_clock : d.default_clock;
}

double power_w(const nvmlDevice_st& d) {
  if (d.work_clock) return d.work_w;
  return d.idle_w + d.w_per_mhz * current_clock(d);
}

void advance_energy(nvmlDevice_st& d) {
  if (d.emulated) return;
  const auto now = std::chrono::steady_clock::now();
  d.energy_mj += power_w(d) * std::chrono::duration<double>(now - d.last_update).count() * 1e3;
  d.last_update = now;
}

// Common prologue: initialised, a known handle, no injected error for this function.
int enter(const char* function, nvmlDevice_t device) {
  State& s = state();
  if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (device) {
    const bool known = std::any_of(s.devices.begin(), s.devices.end(),
                                   [&](const nvmlDevice_st& d) { return &d == device; });
    if (!known) return NVML_ERROR_INVALID_ARGUMENT;
    if (auto it = device->errors.find(function); it != device->errors.end()) return it->second;
  }
  if (auto it = s.errors.find(function); it != s.errors.end()) return it->second;
  return NVML_SUCCESS;
}

nvmlReturn_t fill_list(const std::vector<unsigned>& values, unsigned* count, unsigned* out) {
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned capacity = *count;
  *count = static_cast<unsigned>(values.size());
  if (!out || capacity < values.size()) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::copy(values.begin(), values.end(), out);
  return NVML_SUCCESS;
}

#define FAKE_ENTER(device)                                        \
  std::lock_guard<std::mutex> lock(state().mutex);                \
  if (int code = enter(__func__, device); code != NVML_SUCCESS) { \
    return static_cast<nvmlReturn_t>(code);                       \
  }

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2(void) {
  std::lock_guard<std::mutex> lock(state().mutex);
  State& s = state();
  if (s.init_count == 0) {
    if (!load_script()) return NVML_ERROR_UNKNOWN;
    if (auto it = s.errors.find(__func__); it != s.errors.end()) {
      return static_cast<nvmlReturn_t>(it->second);
    }
  }
  ++s.init_count;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
  FAKE_ENTER(nullptr);
  --state().init_count;
  return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_NO_DATA:
      return "No Data";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  FAKE_ENTER(nullptr);
  const std::string& v = state().driver_version;
  if (!version) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < v.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(version, v.c_str(), v.size() + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount) {
  FAKE_ENTER(nullptr);
  if (!deviceCount) return NVML_ERROR_INVALID_ARGUMENT;
  *deviceCount = static_cast<unsigned>(state().devices.size());
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  FAKE_ENTER(nullptr);
  if (!device || index >= state().devices.size()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &state().devices[index];
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  FAKE_ENTER(device);
  if (!name) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < device->name.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(name, device->name.c_str(), device->name.size() + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  FAKE_ENTER(device);
  if (!uuid) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < device->uuid.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(uuid, device->uuid.c_str(), device->uuid.size() + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy) {
  FAKE_ENTER(device);
  if (!energy) return NVML_ERROR_INVALID_ARGUMENT;
  advance_energy(*device);
  *energy = static_cast<unsigned long long>(device->energy_mj);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  FAKE_ENTER(device);
  if (!power) return NVML_ERROR_INVALID_ARGUMENT;
  *power = static_cast<unsigned>(power_w(*device) * 1000.0 + 0.5);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                    unsigned int* clock) {
  FAKE_ENTER(device);
  if (!clock) return NVML_ERROR_INVALID_ARGUMENT;
  if (type != NVML_CLOCK_SM && type != NVML_CLOCK_GRAPHICS) return NVML_ERROR_NOT_SUPPORTED;
  *clock = current_clock(*device);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device, unsigned int* count,
                                                unsigned int* clocksMHz) {
  FAKE_ENTER(device);
  std::vector<unsigned> memory;
  for (const auto& entry : device->graphics_clocks) memory.push_back(entry.first);
  std::reverse(memory.begin(), memory.end());  // NVML lists the highest first
  return fill_list(memory, count, clocksMHz);
}

nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device, unsigned int memoryClockMHz,
                                                  unsigned int* count, unsigned int* clocksMHz) {
  FAKE_ENTER(device);
  auto it = device->graphics_clocks.find(memoryClockMHz);
  if (it == device->graphics_clocks.end()) return NVML_ERROR_NOT_FOUND;
  return fill_list(it->second, count, clocksMHz);
}

nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int minGpuClockMHz,
                                          unsigned int maxGpuClockMHz) {
  FAKE_ENTER(device);
  unsigned lowest = ~0u;
  unsigned highest = 0;
  for (const auto& entry : device->graphics_clocks) {
    for (unsigned f : entry.second) {
      lowest = std::min(lowest, f);
      highest = std::max(highest, f);
    }
  }
  if (minGpuClockMHz > maxGpuClockMHz || minGpuClockMHz < lowest || maxGpuClockMHz > highest) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  advance_energy(*device);
  device->locked_clock = maxGpuClockMHz;
  device->work_clock = 0;
  const auto index = device - state().devices.data();
  append_log("nvmlDeviceSetGpuLockedClocks " + std::to_string(index) + " " +
             std::to_string(minGpuClockMHz) + " " + std::to_string(maxGpuClockMHz));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device) {
  FAKE_ENTER(device);
  advance_energy(*device);
  device->locked_clock = 0;
  device->work_clock = 0;
  append_log("nvmlDeviceResetGpuLockedClocks " + std::to_string(device - state().devices.data()));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t device, unsigned int minMemClockMHz,
                                             unsigned int maxMemClockMHz) {
  FAKE_ENTER(device);
  // Only listed memory clocks, as with the SM lock's range check.
  if (minMemClockMHz != maxMemClockMHz || !device->graphics_clocks.count(maxMemClockMHz)) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  append_log("nvmlDeviceSetMemoryLockedClocks " + std::to_string(device - state().devices.data()) +
             " " + std::to_string(minMemClockMHz) + " " + std::to_string(maxMemClockMHz));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t device) {
  FAKE_ENTER(device);
  append_log("nvmlDeviceResetMemoryLockedClocks " +
             std::to_string(device - state().devices.data()));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* limit) {
  FAKE_ENTER(device);
  if (!limit) return NVML_ERROR_INVALID_ARGUMENT;
  *limit = device->power_limit_mw;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                          unsigned int* minLimit,
                                                          unsigned int* maxLimit) {
  FAKE_ENTER(device);
  if (!minLimit || !maxLimit) return NVML_ERROR_INVALID_ARGUMENT;
  *minLimit = device->power_limit_min_mw;
  *maxLimit = device->power_limit_max_mw;
  return NVML_SUCCESS;
}

// Not NVML: the hooks of a stand-in training job on an emulated-time device. The work took
// `seconds` and `joules` at an average SM clock of `clock_mhz` (what NVML reads back until the next
// clock setter). Returns NVML_ERROR_INVALID_ARGUMENT for a wall-time device or a bad value.
int kareusFakeNvmlRunWork(unsigned index, double seconds, double joules, unsigned clock_mhz) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto& devices = state().devices;
  if (index >= devices.size() || !devices[index].emulated) return NVML_ERROR_INVALID_ARGUMENT;
  if (!(seconds >= 0) || !(joules >= 0) || clock_mhz == 0) return NVML_ERROR_INVALID_ARGUMENT;
  nvmlDevice_st& d = devices[index];
  d.emulated_s += seconds;
  d.energy_mj += joules * 1e3;
  d.work_w = seconds > 0 ? joules / seconds : d.work_w;
  d.work_clock = clock_mhz;
  return NVML_SUCCESS;
}

// Seconds of work an emulated-time device has run; a negative value for any other device.
double kareusFakeNvmlDeviceTime(unsigned index) {
  std::lock_guard<std::mutex> lock(state().mutex);
  const auto& devices = state().devices;
  if (index >= devices.size() || !devices[index].emulated) return -1;
  return devices[index].emulated_s;
}

}  // extern "C"
