// SPDX-License-Identifier: Apache-2.0
// The plan directory: the files `kareus plan --out` writes and `kareus report` and `kareus compare`
// read (docs/plan.md lists them). This module alone knows their names and formats: plan_write.hpp
// makes them from a plan run, and PlanFiles holds them in memory, so a reader works alike on a
// folder and on a plan that was never written to one.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace kareus::plan_dir {

inline constexpr const char* kSummary = "summary.json";
inline constexpr const char* kSchedule = "schedule.json";
inline constexpr const char* kPartitions = "partitions.json";
// What a reader's message says of a missing file: that a plan directory holds it (field_ref
// "plan_dir", which a front end spells as the way its user makes one).
std::string written_by();

// "frontier_<method>.csv": one method's frontier.
std::string frontier_file(std::string_view method);
// Whether `name` is a file of a plan directory (what a folder being replaced may hold).
bool is_plan_file(std::string_view name);

// The files of one plan by name, and the folder they are in or go to, which names them in
// messages (empty for a plan held in memory only).
struct PlanFiles {
  std::filesystem::path dir;
  std::map<std::string, std::string> texts;

  // The text of `name`; throws kareus::Error "<source>: not found; <why>" when there is none
  // (empty `why`: written_by()).
  const std::string& text(const std::string& name, std::string_view why = {}) const;
  // How messages name file `name`: its path.
  std::string source(const std::string& name) const;
};

// The plan files in `dir` (those there are: a reader asks for the ones it needs). Throws
// kareus::Error naming `dir` when it is not a directory, or I/O errors.
PlanFiles read_plan_files(const std::filesystem::path& dir);

// Writes every file into `dir`, each atomically.
void write_plan_files(const PlanFiles& files, const std::filesystem::path& dir);

}  // namespace kareus::plan_dir
