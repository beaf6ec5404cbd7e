// SPDX-License-Identifier: Apache-2.0
// The one contract every reader keeps under fuzzing: any bytes either parse or throw
// kareus::Error (a one-line message for the user). Any other exception, a crash, a leak or
// undefined behaviour (ASan/UBSan are on) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kareus/core/error.hpp"

// Defined by each target: reads `text` the way its reader does.
void read_input(std::string_view text);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    read_input(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const kareus::Error&) {
    // Refused with a message: what a bad input must get.
  }
  return 0;
}
