// SPDX-License-Identifier: Apache-2.0
// The one error type of Kareus. Its message is meant for a user to act on: what was wrong, where
// (file, line, field) and what is allowed. Its kind says who can fix it, and is set where the error
// happens; each front end maps kinds once: the CLI prints the message on one line and exits with
// exit_code(kind), the C API returns a kareus_status per kind, Python raises a subclass per kind.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace kareus {

enum class ErrorKind {
  kInvalidInput,  // a workload, flag, file content or request that Kareus refuses
  kIo,            // the file system, the measurement store or a socket failed
  kDevice,        // the GPU, its driver (NVML, CUDA) or kareusd refused or failed
  kInternal,      // a broken invariant: a bug in Kareus
};

std::string_view to_string(ErrorKind kind);
// The CLI's exit status: 2 for what the user can act on (input, files, device), 3 for a bug.
int exit_code(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message, ErrorKind kind = ErrorKind::kInvalidInput)
      : std::runtime_error(std::move(message)), kind_(kind) {}

  ErrorKind kind() const { return kind_; }

  static Error io(std::string message) { return Error(std::move(message), ErrorKind::kIo); }
  static Error device(std::string message) { return Error(std::move(message), ErrorKind::kDevice); }

  // "<where>: <field> = <value>: <allowed>", e.g.
  // "workload.json: /parallelism/tp = 5: must divide num_attention_heads (24)".
  static Error invalid(std::string_view where, std::string_view field, std::string_view value,
                       std::string_view allowed);

 private:
  ErrorKind kind_;
};

// Throws Error::invalid(...) unless `condition` holds.
void require(bool condition, std::string_view where, std::string_view field, std::string_view value,
             std::string_view allowed);

// Shortest round-trippable text of a number, for error messages and tables.
std::string format_number(double value);

}  // namespace kareus
