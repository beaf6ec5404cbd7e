// SPDX-License-Identifier: Apache-2.0
// The message of the kareus::Error that `f` throws, or "" when it throws none.
#pragma once

#include <functional>
#include <string>

#include "kareus/core/error.hpp"

namespace kareus::testing {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace kareus::testing
