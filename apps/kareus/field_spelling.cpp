// SPDX-License-Identifier: Apache-2.0
#include "field_spelling.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

namespace kareus::cli {
namespace {

struct Spelling {
  std::string_view field;
  std::string_view flag;
  std::string_view text;  // what a message says for the field, where it is more than the flag
};

// The fields whose flag is not "--" and the field with dashes.
constexpr std::array<Spelling, 5> kSpellings{{
    {"pool_share", "--pool", ""},
    {"replicates", "--bootstrap", ""},
    {"store_path", "--db", ""},
    {"power_limit", "--power-limit-w", ""},
    // A command's workload takes its microbatch size from the flag or from the workload file.
    {"microbatch_size", "--mbs", "--mbs or microbatch_size"},
}};

// No command takes a plan directory's path as this field; messages that need one (kareus report,
// kareus compare) point at the command that writes it.
constexpr std::string_view kPlanDir = "the --out DIR of kareus plan";

// The subcommand that ran: the deepest one parsed ("energylens fit").
const CLI::App& command_of(const CLI::App& app) {
  const CLI::App* command = &app;
  for (auto chosen = command->get_subcommands(); !chosen.empty();
       chosen = command->get_subcommands())
    command = chosen.front();
  return *command;
}

}  // namespace

FieldSpeller field_speller(const CLI::App& app) {
  const CLI::App& command = command_of(app);
  return [&command](std::string_view field) -> std::string {
    if (field == "plan_dir") return std::string(kPlanDir);
    const auto* spelling = std::find_if(kSpellings.begin(), kSpellings.end(),
                                        [field](const Spelling& s) { return s.field == field; });
    std::string flag;
    if (spelling != kSpellings.end()) {
      flag = spelling->flag;
    } else {
      flag = "--" + std::string(field);
      std::replace(flag.begin(), flag.end(), '_', '-');
    }
    if (command.get_option_no_throw(flag) == nullptr) return std::string(field);
    return std::string(spelling != kSpellings.end() && !spelling->text.empty() ? spelling->text
                                                                               : flag);
  };
}

}  // namespace kareus::cli
