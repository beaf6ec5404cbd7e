// The one error type of Kareus. Its message is meant for a user to act on: what was wrong, where
// (file, line, field) and what is allowed. The CLI prints it on one line and exits with 2.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace kareus {

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message) : std::runtime_error(std::move(message)) {}

  // "<where>: <field> = <value>: <allowed>", e.g.
  // "workload.json: /parallelism/tp = 5: must divide num_attention_heads (24)".
  static Error invalid(std::string_view where, std::string_view field, std::string_view value,
                       std::string_view allowed);
};

// Throws Error::invalid(...) unless `condition` holds.
void require(bool condition, std::string_view where, std::string_view field,
             std::string_view value, std::string_view allowed);

// Shortest round-trippable text of a number, for error messages and tables.
std::string format_number(double value);

}  // namespace kareus
