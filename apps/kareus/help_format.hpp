// SPDX-License-Identifier: Apache-2.0
// `kareus ... --help` within kLineWidth columns: CLI11 prints each flag's and subcommand's
// description on one line, however long; this folds it at spaces, continuing under the
// description column.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace kareus::cli {

class WrappingFormatter : public CLI::Formatter {
 public:
  std::string make_option_desc(const CLI::Option* option) const override;
  std::string make_subcommand(const CLI::App* sub) const override;

 private:
  // `text` folded to the columns right of the names, its lines joined by '\n' (which CLI11
  // indents to the description column).
  std::string folded(const std::string& text) const;
};

}  // namespace kareus::cli
