// SPDX-License-Identifier: Apache-2.0
#include "status.hpp"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

namespace kareus::capi {
namespace {

thread_local std::string last_error;

kareus_status status_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidInput:
      return KAREUS_ERROR_INVALID_INPUT;
    case ErrorKind::kIo:
      return KAREUS_ERROR_IO;
    case ErrorKind::kDevice:
      return KAREUS_ERROR_NVML;
    case ErrorKind::kInternal:
      return KAREUS_ERROR_INTERNAL;
  }
  return KAREUS_ERROR_INTERNAL;
}

}  // namespace

void set_last_error(std::string message) {
  last_error = std::move(message);
}

kareus_status status_of_current_exception() noexcept {
  try {
    throw;
  } catch (const ArgumentError& e) {
    last_error = e.what();
    return KAREUS_ERROR_INVALID_ARGUMENT;
  } catch (const Error& e) {
    // The library's field names are those of the C structs (store_path, methods, ...).
    last_error = e.what();
    return status_of(e.kind());
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
    return KAREUS_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    last_error = e.what();
    return KAREUS_ERROR_INTERNAL;
  } catch (...) {
    last_error = "unknown exception";
    return KAREUS_ERROR_INTERNAL;
  }
}

void check_index(std::size_t index, std::size_t size, const char* what) {
  if (index >= size)
    throw ArgumentError(std::string(what) + " " + std::to_string(index) + " is out of range (" +
                        std::to_string(size) + " available)");
}

char* copy_to_malloc(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (!out) throw std::bad_alloc();
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

}  // namespace kareus::capi

extern "C" {

const char* kareus_last_error(void) {
  return kareus::capi::last_error.c_str();
}

const char* kareus_status_string(kareus_status status) {
  switch (status) {
    case KAREUS_OK:
      return "ok";
    case KAREUS_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case KAREUS_ERROR_INVALID_INPUT:
      return "invalid input";
    case KAREUS_ERROR_NVML:
      return "NVML error";
    case KAREUS_ERROR_OUT_OF_MEMORY:
      return "out of memory";
    case KAREUS_ERROR_INTERNAL:
      return "internal error";
    case KAREUS_ERROR_IO:
      return "I/O error";
    case KAREUS_STATUS_FORCE_INT:
      break;
  }
  return "unknown status";
}

void kareus_string_free(char* text) {
  std::free(text);
}

}  // extern "C"
