// SPDX-License-Identifier: Apache-2.0
#include "cli_messages.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kareus/core/nearest.hpp"
#include "kareus/core/printable.hpp"

namespace kareus::cli {
namespace {

// The command as the user typed it: "kareus", "kareus plan", "kareus energylens fit".
std::string command_path(const CLI::App* app) {
  std::vector<std::string> names;
  for (; app != nullptr; app = app->get_parent()) names.push_back(app->get_name());
  std::reverse(names.begin(), names.end());
  names.front() = "kareus";
  std::string path;
  for (const auto& n : names) path += (path.empty() ? "" : " ") + n;
  return path;
}

// The subcommand the parse went deepest into: the one whose flags were being read.
const CLI::App* chosen_command(const CLI::App& app) {
  const CLI::App* at = &app;
  for (;;) {
    const auto chosen = at->get_subcommands();
    if (chosen.empty()) return at;
    at = chosen.back();
  }
}

std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names{"--help"};
  for (const CLI::Option* option : app.get_options())
    for (const auto& name : option->get_lnames()) names.push_back("--" + name);
  return names;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

std::string suggestion(std::string_view typed, const std::vector<std::string>& names,
                       std::string_view help) {
  const std::string near = nearest_name(typed, names);
  if (!near.empty()) return fmt::format("did you mean {}?", near);
  return fmt::format("`{} --help` lists them", help);
}

// Arguments left over: an unknown command (a word where a command is expected), an unknown flag,
// or a value no flag took.
std::string leftover_message(const CLI::App& at, const std::vector<std::string>& left) {
  const std::string where = command_path(&at);
  const std::vector<std::string> commands = command_names(at);
  if (!commands.empty() && !left.front().starts_with("-"))
    return fmt::format("{}: unknown command {}; {}", where, printable(left.front()),
                       suggestion(left.front(), commands, where));
  const auto flag = std::find_if(left.begin(), left.end(),
                                 [](const std::string& a) { return a.starts_with("-"); });
  if (flag != left.end()) {
    const std::string typed = flag->substr(0, flag->find('='));
    return fmt::format("{}: unknown flag {}; {}", where, printable(typed),
                       suggestion(typed, flag_names(at), where));
  }
  return fmt::format("{}: unexpected argument {}: every value follows its flag (`{} --help`)",
                     where, printable(left.front()), where);
}

// A flag given more often than it takes values (CLI11 counts the values it kept).
std::string repeated_flag(const CLI::App& at) {
  for (const CLI::Option* option : at.get_options()) {
    const int most = option->get_items_expected_max();
    if (option->count() > 1 && most >= 1 && option->count() > static_cast<std::size_t>(most))
      return fmt::format("{}: {} given {} times; give it once", command_path(&at),
                         option->get_name(), option->count());
  }
  return "";
}

// Two flags that exclude each other, both given.
std::string excluded_pair(const CLI::App& at) {
  for (const CLI::Option* option : at.get_options()) {
    if (option->count() == 0) continue;
    for (const CLI::Option* other : option->get_excludes())
      if (other->count() > 0)
        return fmt::format("{}: {} excludes {}; give one of them", command_path(&at),
                           option->get_name(), other->get_name());
  }
  return "";
}

}  // namespace

std::string parse_error_message(const CLI::App& app, const CLI::ParseError& error) {
  const CLI::App& at = *chosen_command(app);
  const std::vector<std::string> left = at.remaining(false);
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr && !left.empty())
    return leftover_message(at, left);
  // A command that takes a command (kareus, kareus energylens) and got none it knows.
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr && !command_names(at).empty()) {
    if (!left.empty()) return leftover_message(at, left);
    const std::string where = command_path(&at);
    return fmt::format("{}: no command given; `{} --help` lists them", where, where);
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr)
    if (std::string line = repeated_flag(at); !line.empty()) return line;
  if (dynamic_cast<const CLI::ExcludesError*>(&error) != nullptr)
    if (std::string line = excluded_pair(at); !line.empty()) return line;
  return fmt::format("{}: {}", command_path(&at), printable(error.what()));
}

}  // namespace kareus::cli
