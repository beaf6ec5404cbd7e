// SPDX-License-Identifier: Apache-2.0
// Checks of numeric flags that refuse nan and inf, and say in a few words what is allowed.
// CLI11's PositiveNumber lets nan through (every comparison with nan is false) and answers 0 with
// the whole double range written out in 300 digits.
#pragma once

#include <CLI/CLI.hpp>

namespace kareus::cli {

// A finite number > 0.
CLI::Validator positive_number();
// A finite number >= 0.
CLI::Validator non_negative_number();
// The same with a bound from kareus/core/limits.hpp.
CLI::Validator positive_number_at_most(double max);
CLI::Validator non_negative_number_at_most(double max);
// An integer from 1 to `max`, with the bound in the message.
CLI::Validator integer_in(long long min, long long max);

// Adds to every integer and floating-point option of `app` and its subcommands a check of the
// text as typed: decimal digits only for integers (CLI11 reads "-1" into an unsigned seed as
// 2^64-1, "010" as octal 8, and a too-large number as the largest), a finite number for floats.
void check_numeric_flags(CLI::App& app);

}  // namespace kareus::cli
