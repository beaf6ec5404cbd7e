// SPDX-License-Identifier: Apache-2.0
#include "common_flags.hpp"

#include "kareus/store/store.hpp"

namespace kareus::cli {

CLI::Option* add_json_flag(CLI::App& cmd, bool& json, const std::string& help) {
  return cmd.add_flag("--json", json, help);
}

CLI::Option* add_quiet_flag(CLI::App& cmd, bool& quiet, const std::string& help) {
  return cmd.add_flag("--quiet", quiet, help);
}

StoreFlags::Options StoreFlags::add_to(CLI::App& cmd, const std::string& no_db_help) {
  return {cmd.add_option("--db", db,
                         "Measurement store (default $XDG_CACHE_HOME/kareus/measurements.sqlite)"),
          cmd.add_flag("--no-db", no_db, no_db_help)};
}

std::filesystem::path StoreFlags::path() const {
  if (no_db) return {};
  return db.empty() ? store::Store::default_path() : std::filesystem::path(db);
}

}  // namespace kareus::cli
