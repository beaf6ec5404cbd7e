// SPDX-License-Identifier: Apache-2.0
#include "help_format.hpp"

#include <sstream>

#include "kareus/core/wrap.hpp"

namespace kareus::cli {

std::string WrappingFormatter::folded(const std::string& text) const {
  std::string out;
  std::istringstream paragraphs(text);
  for (std::string paragraph; std::getline(paragraphs, paragraph);)
    out += wrap(paragraph, kLineWidth - get_column_width());
  if (!out.empty()) out.pop_back();  // CLI11 ends the line itself
  return out;
}

std::string WrappingFormatter::make_option_desc(const CLI::Option* option) const {
  return folded(CLI::Formatter::make_option_desc(option));
}

std::string WrappingFormatter::make_subcommand(const CLI::App* sub) const {
  std::stringstream out;
  CLI::detail::format_help(out, sub->get_display_name(true), folded(sub->get_description()),
                           get_column_width());
  return out.str();
}

}  // namespace kareus::cli
