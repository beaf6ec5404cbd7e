// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/output_set.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "kareus/core/error.hpp"

namespace kareus {
namespace fs = std::filesystem;
namespace {

// The nearest part of `path` that exists (the path itself, a parent, or the working folder).
fs::path existing_ancestor(const fs::path& path) {
  std::error_code ec;
  fs::path p = path;
  while (!p.empty() && !fs::exists(fs::symlink_status(p, ec))) p = p.parent_path();
  return p.empty() ? fs::path(".") : p;
}

void check_writable_folder(const fs::path& path, std::string_view where, std::string_view field,
                           const fs::path& shown) {
  std::error_code ec;
  const fs::path base = existing_ancestor(path);
  if (!fs::is_directory(base, ec)) {
    throw Error::invalid(
        where, field, shown.string(),
        fmt::format("{} is not a folder, so nothing can be written under it", base.string()));
  }
  // access() answers yes to root everywhere, and /proc or a read-only mount refuse only the
  // write itself: a folder made and removed again is the answer the real write will get.
  std::string probe = (base / ".kareus-write-check-XXXXXX").string();
  if (access(base.c_str(), W_OK | X_OK) != 0 || mkdtemp(probe.data()) == nullptr) {
    throw Error::invalid(
        where, field, shown.string(),
        fmt::format("cannot write in {}: {}", base.string(), std::strerror(errno)));
  }
  fs::remove(probe, ec);
}

}  // namespace

void check_output_dir(const fs::path& dir, std::string_view where, std::string_view field) {
  check_writable_folder(dir, where, field, dir);
}

void check_output_file(const fs::path& file, std::string_view where, std::string_view field) {
  std::error_code ec;
  if (fs::is_directory(file, ec)) {
    throw Error::invalid(where, field, file.string(), "is a folder: give a file name");
  }
  check_writable_folder(file.has_parent_path() ? file.parent_path() : fs::path("."), where, field,
                        file);
}

OutputDir::OutputDir(const fs::path& target, Owns owns) : shown_(target), owns_(std::move(owns)) {
  std::error_code ec;
  target_ = fs::weakly_canonical(fs::absolute(target), ec);
  if (ec)
    throw Error::io(fmt::format("{}: cannot resolve the path: {}", shown_.string(), ec.message()));
  if (target_.filename().empty()) target_ = target_.parent_path();  // "out/" -> "out"
  const fs::path parent = target_.parent_path();
  fs::create_directories(parent, ec);
  if (ec) {
    throw Error::io(fmt::format("{}: cannot create folder: {}", parent.string(), ec.message()));
  }
  // mkdtemp: a fresh name no other process (or a planted symlink) can hold.
  std::string pattern =
      (parent / fmt::format(".{}.kareus-XXXXXX", target_.filename().string())).string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw Error::io(fmt::format("{}: cannot create a staging folder beside it: {}", shown_.string(),
                                std::strerror(errno)));
  }
  staging_ = pattern;
  // mkdtemp makes it private (0700); the folder it becomes gets the mode mkdir would give.
  const mode_t mask = umask(0);
  umask(mask);
  chmod(staging_.c_str(), 0777 & ~mask);
}

OutputDir::~OutputDir() {
  std::error_code ec;
  if (!staging_.empty()) fs::remove_all(staging_, ec);
}

namespace {

// Each staged file renamed over its namesake on its own: every file is whole, the set is not. A
// previous set's files that this one does not write are removed.
void move_each(const fs::path& staging, const fs::path& target, const fs::path& shown,
               const OutputDir::Owns& owns) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(target, ec)) {
    const std::string name = entry.path().filename().string();
    if (owns && owns(name) && !fs::exists(fs::symlink_status(staging / name))) {
      fs::remove(entry.path(), ec);
    }
  }
  for (const auto& entry : fs::directory_iterator(staging)) {
    fs::rename(entry.path(), target / entry.path().filename(), ec);
    if (ec) {
      throw Error::io(fmt::format("{}: cannot write {}: {}", shown.string(),
                                  entry.path().filename().string(), ec.message()));
    }
  }
}

// Links every entry of `target` that the set does not write, and that is not a previous set's
// (`owns`), into `staging` (folders are moved), so the exchange keeps them. False when that is
// not possible (another file system).
bool carry_over(const fs::path& target, const fs::path& staging, const OutputDir::Owns& owns) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(target, ec)) {
    const fs::path to = staging / entry.path().filename();
    if (fs::exists(fs::symlink_status(to))) continue;
    if (owns && owns(entry.path().filename().string())) continue;
    if (entry.is_directory() && !entry.is_symlink()) {
      if (std::rename(entry.path().c_str(), to.c_str()) != 0) return false;
    } else if (linkat(AT_FDCWD, entry.path().c_str(), AT_FDCWD, to.c_str(), 0) != 0) {
      return false;
    }
  }
  return !ec;
}

}  // namespace

void OutputDir::commit() {
  std::error_code ec;
  const auto st = fs::symlink_status(target_, ec);
  if (!fs::exists(st)) {
    fs::rename(staging_, target_, ec);
    if (ec) {
      throw Error::io(
          fmt::format("{}: cannot create the output folder: {}", shown_.string(), ec.message()));
    }
    staging_.clear();
    return;
  }
  if (!fs::is_directory(target_, ec)) {
    throw Error::io(fmt::format("{}: exists and is not a folder", shown_.string()));
  }
  // Exchanging the folder the process works in would leave it in the removed old set.
  const fs::path cwd = fs::weakly_canonical(fs::current_path(ec), ec);
  const bool holds_cwd =
      !ec && (cwd == target_ || cwd.string().starts_with(target_.string() + "/"));
  if (!holds_cwd && carry_over(target_, staging_, owns_) &&
      renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
    return;  // staging_ now holds the previous set; the destructor removes it.
  }
  move_each(staging_, target_, shown_, owns_);
}

}  // namespace kareus
