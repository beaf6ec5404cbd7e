// SPDX-License-Identifier: Apache-2.0
// Old flag spellings kept for one release after a rename (docs/cli.md): hidden from --help, they
// set the same variable as the new name and say so on stderr.
#pragma once

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

namespace kareus::cli {

// Adds `old_name` to `cmd` as a hidden alias of the option `current`, writing into `target`.
// Giving both is an error.
template <typename T>
CLI::Option* add_deprecated_alias(CLI::App* cmd, CLI::Option* current, const std::string& old_name,
                                  T& target) {
  const std::string new_name = current->get_name();
  auto* alias = cmd->add_option_function<T>(
      old_name, [&target, current, old_name, new_name, path = cmd->get_name()](const T& value) {
        // Checked before the deprecation line, so that a refusal stays one line on stderr.
        if (current->count() > 0) throw CLI::ExcludesError(old_name, new_name);
        std::fputs(fmt::format("kareus {}: {} is deprecated and will be removed in the next "
                               "release; use {} (docs/cli.md)\n",
                               path, old_name, new_name)
                       .c_str(),
                   stderr);
        target = value;
      });
  alias->group("");  // hidden from --help
  return alias;
}

}  // namespace kareus::cli
