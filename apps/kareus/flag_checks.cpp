// SPDX-License-Identifier: Apache-2.0
#include "flag_checks.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "kareus/core/decimal.hpp"

namespace kareus::cli {
namespace {

// The number in `text`, or nan when it is not a decimal number in full (0x1p-3 is not).
double parse_number(const std::string& text) {
  return parse_decimal(text).value_or(std::nan(""));
}

CLI::Validator number_check(bool zero_allowed, double max = HUGE_VAL) {
  const std::string allowed =
      std::isfinite(max)
          ? fmt::format("a number {} and at most {:g}", zero_allowed ? ">= 0" : "> 0", max)
          : std::string(zero_allowed ? "a finite number >= 0" : "a finite number > 0");
  return CLI::Validator(
      [zero_allowed, max, allowed](std::string& text) -> std::string {
        const double v = parse_number(text);
        if (std::isfinite(v) && (zero_allowed ? v >= 0 : v > 0) && v <= max) return {};
        return fmt::format("{}: expected {}", text, allowed);
      },
      zero_allowed ? "NUMBER>=0" : "NUMBER>0");
}

// Decimal digits with an optional sign ('-' only where `negative_allowed`), in range of int64.
bool plain_integer(const std::string& text, bool negative_allowed) {
  std::size_t digits = 0;
  if (!text.empty() && (text[0] == '+' || (negative_allowed && text[0] == '-'))) digits = 1;
  if (digits == text.size()) return false;
  for (std::size_t i = digits; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  errno = 0;
  (void)std::strtoll(text.c_str(), nullptr, 10);
  return errno != ERANGE;
}

CLI::Validator integer_text(bool negative_allowed) {
  return CLI::Validator(
      [negative_allowed](std::string& text) -> std::string {
        if (plain_integer(text, negative_allowed)) return {};
        return fmt::format("{}: expected {} integer in decimal digits", text,
                           negative_allowed ? "an" : "a non-negative");
      },
      "");
}

CLI::Validator finite_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (std::isfinite(parse_number(text))) return {};
        return fmt::format("{}: expected a finite number", text);
      },
      "");
}

}  // namespace

void check_numeric_flags(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    if (type == "INT") {
      option->check(integer_text(true));
    } else if (type == "UINT") {
      option->check(integer_text(false));
    } else if (type == "FLOAT") {
      option->check(finite_text());
    }
  }
  for (CLI::App* sub : app.get_subcommands({})) check_numeric_flags(*sub);
}

CLI::Validator positive_number() {
  return number_check(false);
}

CLI::Validator non_negative_number() {
  return number_check(true);
}

CLI::Validator positive_number_at_most(double max) {
  return number_check(false, max);
}

CLI::Validator non_negative_number_at_most(double max) {
  return number_check(true, max);
}

CLI::Validator integer_in(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (!text.empty() && end == text.c_str() + text.size() && errno != ERANGE && v >= min &&
            v <= max)
          return {};
        return fmt::format("{}: expected an integer from {} to {}", text, min, max);
      },
      fmt::format("INT in [{}..{}]", min, max));
}

}  // namespace kareus::cli
