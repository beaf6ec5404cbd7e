// SPDX-License-Identifier: Apache-2.0
// The constants of a GPU file that calibration may change: those its sources say were fitted or
// chosen (or derived from a ratio) rather than published or measured directly, each with the
// range physics allows it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kareus/hardware/gpu_file.hpp"

namespace kareus::calibration {

struct Bounds {
  double lower = 0;
  double upper = 0;
  std::string why;
};

struct FreeConstant {
  std::string key;
  double value = 0;  // the file's
  std::string source;
  // nullopt: free by its source, but no physical range is known here, so it is not fitted.
  std::optional<Bounds> bounds;
};

// A source that starts with "fitted" or "chosen", or says "[derived]": the number was not read off
// a datasheet, a tool or one measurement of its own.
bool is_free(const std::string& source);

// The file's free constants in file order, with their bounds for its GPU.
std::vector<FreeConstant> free_constants(const GpuFile& file);

}  // namespace kareus::calibration
