// SPDX-License-Identifier: Apache-2.0
// Outputs written as a set. A command that writes several files into one folder (plan --out,
// --export-artifact) stages them in a hidden sibling folder and renames that into place as a
// whole, so a failed or interrupted rerun never leaves schedule.json and summary.json from two
// different runs side by side. Output paths are checked before the work starts, so a path that
// cannot be written fails in a second rather than after a long search.
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>

namespace kareus {

// Throws an invalid-input Error ("<where>: <field> = <dir>: ...") unless `dir` is, or can be
// created as, a writable folder: every existing part of the path must be a folder.
void check_output_dir(const std::filesystem::path& dir, std::string_view where,
                      std::string_view field);

// The same for a file: its folder as above, and the file itself, when present, not a folder.
void check_output_file(const std::filesystem::path& file, std::string_view where,
                       std::string_view field);

// A folder of outputs under construction. Write into staging(); commit() puts the set in place;
// a set that is never committed (an exception on the way) is removed and the target untouched.
class OutputDir {
 public:
  // `owns` says which file names in the target belong to a previous set of the same kind (the
  // frontier of a method planned last time): those are replaced, never carried over, so the
  // folder holds one run's files; every other name in it is kept.
  using Owns = std::function<bool(std::string_view name)>;
  explicit OutputDir(const std::filesystem::path& target, Owns owns = {});
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  ~OutputDir();

  const std::filesystem::path& staging() const { return staging_; }
  const std::filesystem::path& target() const { return target_; }

  // A new target is the staged folder renamed. An existing target is exchanged with the staged
  // folder in one rename (renameat2 RENAME_EXCHANGE) after the files this set does not write
  // are linked into it, so nothing of the user's is lost; where the file system cannot exchange
  // (or the target is a mount point or holds the working folder), each file is renamed in on its
  // own: every file whole, the set not.
  void commit();

 private:
  std::filesystem::path shown_;   // as the user gave it, for messages
  std::filesystem::path target_;  // absolute, symbolic links resolved
  std::filesystem::path staging_;
  Owns owns_;
};

}  // namespace kareus
