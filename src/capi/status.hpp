// SPDX-License-Identifier: Apache-2.0
// How the C API turns C++ exceptions into a kareus_status and the thread's last error message.
#pragma once

#include <string>

#include "kareus/core/error.hpp"
#include "kareus/kareus.h"

namespace kareus::capi {

// A caller's programming error (NULL pointer, index out of range): KAREUS_ERROR_INVALID_ARGUMENT.
class ArgumentError : public Error {
 public:
  using Error::Error;
};

void set_last_error(std::string message);
// Maps the exception in flight to a status and records its message.
kareus_status status_of_current_exception() noexcept;

// Runs `body`; KAREUS_OK and an empty message, or the status of what it threw.
template <class F>
kareus_status guarded(F&& body) noexcept {
  try {
    body();
    set_last_error({});
    return KAREUS_OK;
  } catch (...) {
    return status_of_current_exception();
  }
}

// Throws ArgumentError naming the parameter unless `pointer` is set.
template <class T>
T* required(T* pointer, const char* parameter) {
  if (!pointer) throw ArgumentError(std::string(parameter) + " is NULL");
  return pointer;
}

// Throws ArgumentError unless index < size.
void check_index(std::size_t index, std::size_t size, const char* what);

// `text` in memory from malloc, as a `char*` the caller releases with kareus_string_free.
char* copy_to_malloc(const std::string& text);

}  // namespace kareus::capi
