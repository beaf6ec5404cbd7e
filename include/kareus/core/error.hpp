// SPDX-License-Identifier: Apache-2.0
// The one error type of Kareus. Its message is meant for a user to act on: what was wrong, where
// (file, line, field) and what is allowed. Its kind says who can fix it, and is set where the error
// happens; each front end maps kinds once: the CLI prints the message on one line and exits with
// exit_code(kind), the C API returns a kareus_status per kind, Python raises a subclass per kind.
//
// The library names fields, never a front end's spelling of them. A field the caller sets (a
// member of an options struct or request, such as "scale_by" or "socket_path") is written
// field_ref("scale_by") wherever a message mentions it: as the field of Error::invalid, or in the
// prose ("or pass {} off"). what() spells every such field by its library name; a front end
// renders the same error with message(spell), where `spell` maps a field to the name its user
// types (the CLI: "--scale-by"; Python: a keyword). Everything else in a message is literal, such
// as a file's key, column or JSON pointer. An invalid-input error also keeps its parts (where,
// field, value, allowed) apart from the message, for a front end that words the refusal itself.
#pragma once

#include <functional>
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

// A front end's name for a library field; a field it does not know keeps its library name.
using FieldSpeller = std::function<std::string(std::string_view field)>;

// Marks `field` in a message as a field its caller sets, for front ends to spell (see above).
std::string field_ref(std::string_view field);

// `text` with every field_ref spelt by `spell`.
std::string spell_fields(std::string_view text, const FieldSpeller& spell);

class Error : public std::runtime_error {
 public:
  // `message` may mention fields through field_ref.
  explicit Error(const std::string& message, ErrorKind kind = ErrorKind::kInvalidInput);

  ErrorKind kind() const { return kind_; }

  static Error io(const std::string& message) { return Error(message, ErrorKind::kIo); }
  static Error device(const std::string& message) { return Error(message, ErrorKind::kDevice); }

  // "<where>: <field> = <value>: <allowed>", e.g.
  // "workload.json: /parallelism/tp = 5: must divide num_attention_heads (24)".
  static Error invalid(std::string_view where, std::string_view field, std::string_view value,
                       std::string_view allowed);

  // The parts of an invalid-input error, each with its fields by their library names; empty for
  // an error made from one message.
  const std::string& where() const { return where_; }
  const std::string& field() const { return field_; }
  const std::string& value() const { return value_; }
  const std::string& allowed() const { return allowed_; }

  // The message with its fields spelt by `spell`; what() is message() with library names.
  std::string message(const FieldSpeller& spell) const { return spell_fields(text_, spell); }

 private:
  ErrorKind kind_;
  std::string text_;  // the message with its field_ref marks
  std::string where_;
  std::string field_;
  std::string value_;
  std::string allowed_;
};

// Throws Error::invalid(...) unless `condition` holds.
void require(bool condition, std::string_view where, std::string_view field, std::string_view value,
             std::string_view allowed);

// Shortest round-trippable text of a number, for error messages and tables.
std::string format_number(double value);

}  // namespace kareus
