// SPDX-License-Identifier: Apache-2.0
// The argument parser's errors in the house style: one line that names the command and the flag,
// the value where there is one, and what is allowed or the nearest valid name ("did you mean
// --microbatches?"). CLI11's own texts reverse the leftover arguments, say "A subcommand is
// required" for a misspelt command and "At Most 1 required but received 2" for a repeated flag;
// every command's errors pass through here, so no command has to word them itself.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace kareus::cli {

// The line to print (without the trailing newline) for `error`, thrown by `app.parse`; `app` is
// read as the failed parse left it (which subcommand was chosen, what was left over).
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& error);

}  // namespace kareus::cli
