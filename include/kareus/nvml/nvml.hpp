// SPDX-License-Identifier: Apache-2.0
// NVML, loaded at run time with dlopen so that Kareus builds and runs without the NVIDIA driver.
// Only the commands that touch a GPU open it; without a driver they fail with one Error line.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kareus/core/error.hpp"
#include "kareus/core/units.hpp"

namespace kareus::nvml {

// An NVML call that returned something other than NVML_SUCCESS. It is a kareus::Error, so the
// CLI reports it like any other; code() lets callers react to NOT_SUPPORTED and similar.
class NvmlError : public Error {
 public:
  NvmlError(std::string message, int code)
      : Error(std::move(message), ErrorKind::kDevice), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

struct PowerLimitRange {
  Watts min;
  Watts max;
};

// Where the library comes from: $KAREUS_NVML_LIBRARY when set, else the driver's
// libnvidia-ml.so.1 on the loader path.
std::string nvml_library_path();

// One initialised NVML session (nvmlInit_v2 ... nvmlShutdown). GPUs are addressed by NVML index.
// NVML itself is thread-safe, so a const Nvml may be shared between threads.
class Nvml {
 public:
  // Loads nvml_library_path() and initialises NVML; throws Error when the library or the driver
  // is missing ("NVML unavailable: ...").
  Nvml();
  explicit Nvml(const std::string& library_path);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  unsigned device_count() const;
  std::string driver_version() const;
  std::string name(unsigned gpu) const;
  std::string uuid(unsigned gpu) const;
  // Cumulative energy counter since the driver was loaded (NVML reports mJ).
  Joules total_energy(unsigned gpu) const;
  Watts power(unsigned gpu) const;
  MHz sm_clock(unsigned gpu) const;
  // Graphics clocks supported at the highest memory clock, highest first. Perseus and Kareus
  // control the SM clock only and leave memory at its maximum.
  std::vector<MHz> supported_sm_clocks(unsigned gpu) const;
  // Locks the SM clock to exactly `clock` (min = max); it must be a whole number of MHz.
  void set_locked_sm_clock(unsigned gpu, MHz clock) const;
  void reset_locked_sm_clocks(unsigned gpu) const;
  // The highest supported memory clock, and locking the memory clock (min = max) as Zeus does
  // during training; NvmlError FUNCTION_NOT_FOUND when the driver lacks the lock (before R515).
  MHz max_memory_clock(unsigned gpu) const;
  void set_locked_memory_clock(unsigned gpu, MHz clock) const;
  void reset_locked_memory_clocks(unsigned gpu) const;
  Watts power_limit(unsigned gpu) const;
  PowerLimitRange power_limit_constraints(unsigned gpu) const;

  struct Api;

 private:
  std::unique_ptr<Api> api_;
};

}  // namespace kareus::nvml
