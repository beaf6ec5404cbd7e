// SPDX-License-Identifier: Apache-2.0
// The flags several commands share, defined once: their spelling, and their help unless a command
// says more of what it prints. The workload flags are WorkloadFlags (workload_flags.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>

namespace kareus::cli {

// --json: one JSON document on stdout instead of the text a person reads.
CLI::Option* add_json_flag(CLI::App& cmd, bool& json,
                           const std::string& help = "Print one JSON document");
// --quiet: no progress lines on stderr.
CLI::Option* add_quiet_flag(CLI::App& cmd, bool& quiet,
                            const std::string& help = "No progress on stderr");

// --db PATH and --no-db: the measurement store to resume from and add to, or none.
struct StoreFlags {
  std::string db;
  bool no_db = false;

  struct Options {
    CLI::Option* db;
    CLI::Option* no_db;
  };
  Options add_to(CLI::App& cmd, const std::string& no_db_help);
  // The store to use: --db, else the default; empty with --no-db.
  std::filesystem::path path() const;
};

}  // namespace kareus::cli
