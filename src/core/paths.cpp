// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/paths.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <system_error>
#include <vector>

namespace kareus {
namespace {

// The files the running code was loaded from: the shared object holding this function (the
// executable itself, libkareus.so or the Python extension) and the executable.
std::vector<std::filesystem::path> loaded_from() {
  std::vector<std::filesystem::path> objects;
  std::error_code ec;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&installed_share_dir), &info) != 0 &&
      info.dli_fname != nullptr && *info.dli_fname != '\0') {
    auto path = std::filesystem::canonical(info.dli_fname, ec);
    if (!ec) objects.push_back(path);
  }
  auto exe = std::filesystem::canonical("/proc/self/exe", ec);
  if (!ec) objects.push_back(exe);
  return objects;
}

}  // namespace

std::optional<std::filesystem::path> installed_share_dir() {
  // The deepest installed location is the Python extension, <prefix>/lib/python3/dist-packages/
  // kareus/_kareus.so, four folders below the prefix; bin/ and lib/<multiarch>/ are shallower.
  constexpr int kMaxDepth = 4;
  for (const auto& object : loaded_from()) {
    auto dir = object.parent_path();
    for (int depth = 0; depth <= kMaxDepth && !dir.empty(); ++depth) {
      const auto share = dir / "share" / "kareus";
      std::error_code ec;
      if (std::filesystem::is_directory(share / "data" / "gpus", ec)) return share;
      if (dir == dir.root_path()) break;
      dir = dir.parent_path();
    }
  }
  return std::nullopt;
}

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("KAREUS_DATA_DIR"); env != nullptr && *env != '\0') return env;
  if (auto share = installed_share_dir()) return *share / "data";
  return KAREUS_DEFAULT_DATA_DIR;
}

}  // namespace kareus
