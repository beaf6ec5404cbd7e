// SPDX-License-Identifier: Apache-2.0
#include "kareus/nvml/nvml.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "kareus/nvml/nvml_api.h"

namespace kareus::nvml {

// The resolved entry points. decltype of the declarations in nvml_api.h keeps every pointer's
// type equal to NVIDIA's signature without linking to the library.
struct Nvml::Api {
  void* handle = nullptr;
#define KAREUS_NVML_FN(name) decltype(&::name) name = nullptr;
#include "nvml_functions.inc"
#undef KAREUS_NVML_FN
  // Optional entry points: null when the driver does not export them.
  decltype(&::nvmlDeviceSetMemoryLockedClocks) nvmlDeviceSetMemoryLockedClocks = nullptr;
  decltype(&::nvmlDeviceResetMemoryLockedClocks) nvmlDeviceResetMemoryLockedClocks = nullptr;
};

namespace {

const char* kDefaultLibrary = "libnvidia-ml.so.1";

std::string describe(const Nvml::Api& api, nvmlReturn_t code) {
  const char* text = api.nvmlErrorString ? api.nvmlErrorString(code) : nullptr;
  return fmt::format("{} (NVML code {})", text ? text : "unknown error", static_cast<int>(code));
}

void check(const Nvml::Api& api, nvmlReturn_t code, std::string_view call) {
  if (code == NVML_SUCCESS) return;
  std::string hint;
  if (code == NVML_ERROR_NO_PERMISSION) {
    hint = "; changing clocks needs root: run as root or go through kareusd";
  }
  throw NvmlError(fmt::format("NVML {}: {}{}", call, describe(api, code), hint),
                  static_cast<int>(code));
}

unsigned whole_mhz(MHz clock) {
  const double rounded = std::round(clock.value());
  require(clock.value() > 0 && rounded == clock.value() && rounded < 1e6, "NVML", "sm clock",
          format_number(clock.value()), "must be a positive whole number of MHz");
  return static_cast<unsigned>(rounded);
}

}  // namespace

std::string nvml_library_path() {
  const char* env = std::getenv("KAREUS_NVML_LIBRARY");
  return env && *env ? std::string(env) : std::string(kDefaultLibrary);
}

Nvml::Nvml() : Nvml(nvml_library_path()) {}

Nvml::Nvml(const std::string& library_path) : api_(std::make_unique<Api>()) {
  api_->handle = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!api_->handle) {
    const char* why = dlerror();
    throw NvmlError(fmt::format("NVML unavailable: cannot load {} ({}); this command needs the "
                                "NVIDIA driver (or KAREUS_NVML_LIBRARY pointing at libnvidia-ml)",
                                library_path, why ? why : "unknown reason"),
                    NVML_ERROR_LIBRARY_NOT_FOUND);
  }
  auto fail = [&](std::string message, int code) {
    dlclose(api_->handle);
    throw NvmlError(std::move(message), code);
  };
#define KAREUS_NVML_FN(name)                                                                    \
  api_->name = reinterpret_cast<decltype(&::name)>(dlsym(api_->handle, #name));                 \
  if (!api_->name) {                                                                            \
    fail(fmt::format("NVML unavailable: {} does not export {} (driver too old?)", library_path, \
                     #name),                                                                    \
         NVML_ERROR_FUNCTION_NOT_FOUND);                                                        \
  }
#include "nvml_functions.inc"
#undef KAREUS_NVML_FN
  api_->nvmlDeviceSetMemoryLockedClocks =
      reinterpret_cast<decltype(&::nvmlDeviceSetMemoryLockedClocks)>(
          dlsym(api_->handle, "nvmlDeviceSetMemoryLockedClocks"));
  api_->nvmlDeviceResetMemoryLockedClocks =
      reinterpret_cast<decltype(&::nvmlDeviceResetMemoryLockedClocks)>(
          dlsym(api_->handle, "nvmlDeviceResetMemoryLockedClocks"));
  const nvmlReturn_t code = api_->nvmlInit_v2();
  if (code != NVML_SUCCESS) {
    fail(fmt::format("NVML unavailable: nvmlInit_v2 failed: {}", describe(*api_, code)),
         static_cast<int>(code));
  }
}

Nvml::~Nvml() {
  // A failed shutdown at exit has no one to report to; the driver releases the session anyway.
  api_->nvmlShutdown();
  dlclose(api_->handle);
}

namespace {

nvmlDevice_t device(const Nvml::Api& api, unsigned gpu) {
  nvmlDevice_t handle = nullptr;
  check(api, api.nvmlDeviceGetHandleByIndex_v2(gpu, &handle),
        fmt::format("nvmlDeviceGetHandleByIndex_v2(gpu {})", gpu));
  return handle;
}

}  // namespace

unsigned Nvml::device_count() const {
  unsigned count = 0;
  check(*api_, api_->nvmlDeviceGetCount_v2(&count), "nvmlDeviceGetCount_v2");
  return count;
}

std::string Nvml::driver_version() const {
  char buffer[80] = {};
  check(*api_, api_->nvmlSystemGetDriverVersion(buffer, sizeof buffer),
        "nvmlSystemGetDriverVersion");
  return std::string(buffer, strnlen(buffer, sizeof buffer));
}

std::string Nvml::name(unsigned gpu) const {
  char buffer[KAREUS_NVML_DEVICE_NAME_BUFFER_SIZE] = {};
  check(*api_, api_->nvmlDeviceGetName(device(*api_, gpu), buffer, sizeof buffer),
        fmt::format("nvmlDeviceGetName(gpu {})", gpu));
  return std::string(buffer, strnlen(buffer, sizeof buffer));
}

std::string Nvml::uuid(unsigned gpu) const {
  char buffer[KAREUS_NVML_DEVICE_UUID_BUFFER_SIZE] = {};
  check(*api_, api_->nvmlDeviceGetUUID(device(*api_, gpu), buffer, sizeof buffer),
        fmt::format("nvmlDeviceGetUUID(gpu {})", gpu));
  return std::string(buffer, strnlen(buffer, sizeof buffer));
}

Joules Nvml::total_energy(unsigned gpu) const {
  unsigned long long millijoules = 0;
  check(*api_, api_->nvmlDeviceGetTotalEnergyConsumption(device(*api_, gpu), &millijoules),
        fmt::format("nvmlDeviceGetTotalEnergyConsumption(gpu {})", gpu));
  return Joules(static_cast<double>(millijoules) * 1e-3);
}

namespace {

// NVML reports power in milliwatts through one out-parameter.
Watts read_milliwatts(const Nvml::Api& api, unsigned gpu, std::string_view name,
                      nvmlReturn_t (*call)(nvmlDevice_t, unsigned*)) {
  unsigned milliwatts = 0;
  check(api, call(device(api, gpu), &milliwatts), fmt::format("{}(gpu {})", name, gpu));
  return Watts(milliwatts * 1e-3);
}

}  // namespace

Watts Nvml::power(unsigned gpu) const {
  return read_milliwatts(*api_, gpu, "nvmlDeviceGetPowerUsage", api_->nvmlDeviceGetPowerUsage);
}

MHz Nvml::sm_clock(unsigned gpu) const {
  unsigned mhz = 0;
  check(*api_, api_->nvmlDeviceGetClockInfo(device(*api_, gpu), NVML_CLOCK_SM, &mhz),
        fmt::format("nvmlDeviceGetClockInfo(gpu {}, NVML_CLOCK_SM)", gpu));
  return MHz(mhz);
}

namespace {

// NVML's two-call idiom: ask with count 0 for the size (INSUFFICIENT_SIZE), then fill.
template <class Query>
std::vector<unsigned> clock_list(const Nvml::Api& api, Query query, std::string_view call) {
  unsigned count = 0;
  nvmlReturn_t code = query(&count, nullptr);
  if (code != NVML_ERROR_INSUFFICIENT_SIZE) check(api, code, call);
  std::vector<unsigned> clocks(count);
  if (count > 0) check(api, query(&count, clocks.data()), call);
  clocks.resize(std::min<std::size_t>(count, clocks.size()));
  return clocks;
}

unsigned max_memory_mhz(const Nvml::Api& api, nvmlDevice_t handle, unsigned gpu) {
  const auto memory = clock_list(
      api,
      [&](unsigned* count, unsigned* clocks) {
        return api.nvmlDeviceGetSupportedMemoryClocks(handle, count, clocks);
      },
      fmt::format("nvmlDeviceGetSupportedMemoryClocks(gpu {})", gpu));
  if (memory.empty()) {
    throw NvmlError(fmt::format("NVML gpu {} reports no supported memory clocks", gpu),
                    NVML_ERROR_NOT_SUPPORTED);
  }
  return *std::max_element(memory.begin(), memory.end());
}

template <class Fn>
Fn optional_entry(Fn fn, std::string_view name) {
  if (!fn) {
    throw NvmlError(fmt::format("NVML: this driver does not export {} (memory clock locking "
                                "needs an Ampere or newer GPU and an R515 or newer driver)",
                                name),
                    NVML_ERROR_FUNCTION_NOT_FOUND);
  }
  return fn;
}

}  // namespace

MHz Nvml::max_memory_clock(unsigned gpu) const {
  return MHz(max_memory_mhz(*api_, device(*api_, gpu), gpu));
}

void Nvml::set_locked_memory_clock(unsigned gpu, MHz clock) const {
  const unsigned mhz = whole_mhz(clock);
  const auto fn =
      optional_entry(api_->nvmlDeviceSetMemoryLockedClocks, "nvmlDeviceSetMemoryLockedClocks");
  check(*api_, fn(device(*api_, gpu), mhz, mhz),
        fmt::format("nvmlDeviceSetMemoryLockedClocks(gpu {}, {} MHz)", gpu, mhz));
}

void Nvml::reset_locked_memory_clocks(unsigned gpu) const {
  const auto fn =
      optional_entry(api_->nvmlDeviceResetMemoryLockedClocks, "nvmlDeviceResetMemoryLockedClocks");
  check(*api_, fn(device(*api_, gpu)),
        fmt::format("nvmlDeviceResetMemoryLockedClocks(gpu {})", gpu));
}

std::vector<MHz> Nvml::supported_sm_clocks(unsigned gpu) const {
  const nvmlDevice_t handle = device(*api_, gpu);
  const unsigned max_memory = max_memory_mhz(*api_, handle, gpu);
  auto graphics = clock_list(
      *api_,
      [&](unsigned* count, unsigned* clocks) {
        return api_->nvmlDeviceGetSupportedGraphicsClocks(handle, max_memory, count, clocks);
      },
      fmt::format("nvmlDeviceGetSupportedGraphicsClocks(gpu {}, {} MHz)", gpu, max_memory));
  std::sort(graphics.begin(), graphics.end(), std::greater<>());
  graphics.erase(std::unique(graphics.begin(), graphics.end()), graphics.end());
  std::vector<MHz> out;
  out.reserve(graphics.size());
  for (unsigned f : graphics) out.emplace_back(f);
  return out;
}

void Nvml::set_locked_sm_clock(unsigned gpu, MHz clock) const {
  const unsigned mhz = whole_mhz(clock);
  check(*api_, api_->nvmlDeviceSetGpuLockedClocks(device(*api_, gpu), mhz, mhz),
        fmt::format("nvmlDeviceSetGpuLockedClocks(gpu {}, {} MHz)", gpu, mhz));
}

void Nvml::reset_locked_sm_clocks(unsigned gpu) const {
  check(*api_, api_->nvmlDeviceResetGpuLockedClocks(device(*api_, gpu)),
        fmt::format("nvmlDeviceResetGpuLockedClocks(gpu {})", gpu));
}

Watts Nvml::power_limit(unsigned gpu) const {
  return read_milliwatts(*api_, gpu, "nvmlDeviceGetPowerManagementLimit",
                         api_->nvmlDeviceGetPowerManagementLimit);
}

PowerLimitRange Nvml::power_limit_constraints(unsigned gpu) const {
  unsigned min_mw = 0;
  unsigned max_mw = 0;
  check(*api_,
        api_->nvmlDeviceGetPowerManagementLimitConstraints(device(*api_, gpu), &min_mw, &max_mw),
        fmt::format("nvmlDeviceGetPowerManagementLimitConstraints(gpu {})", gpu));
  return {Watts(min_mw * 1e-3), Watts(max_mw * 1e-3)};
}

}  // namespace kareus::nvml
