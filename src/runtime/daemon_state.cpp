// SPDX-License-Identifier: Apache-2.0
#include "daemon_state.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"

namespace kareus::runtime {
namespace {

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

DaemonState read_daemon_state(const std::filesystem::path& path) {
  DaemonState state;
  std::error_code ignored;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ignored))) return state;
  try {
    const JsonDocument doc = JsonDocument::load_file(path);
    const JsonValue list = doc.root().at("locked_gpus");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const JsonValue item = list.at(i);
      const std::int64_t gpu = item.as_integer();
      if (gpu < 0 || gpu > std::numeric_limits<unsigned>::max()) item.fail("expected a GPU index");
      state.locked_gpus.push_back(static_cast<unsigned>(gpu));
    }
  } catch (const std::exception& e) {
    state.problem = e.what();
  }
  return state;
}

void write_daemon_state(const std::filesystem::path& path, const std::set<unsigned>& locked_gpus) {
  const std::string text =
      Json{{"locked_gpus", std::vector<unsigned>(locked_gpus.begin(), locked_gpus.end())}}.dump() +
      "\n";
  // The folder exists (the daemon checks it at start); one removed since fails mkostemp, with
  // its reason.
  std::string temporary = path.string() + ".XXXXXX";
  const int fd = mkostemp(temporary.data(), O_CLOEXEC);
  bool written = fd >= 0 && fchmod(fd, 0644) == 0 && write_all(fd, text) && fsync(fd) == 0;
  const int saved = errno;
  if (fd >= 0 && close(fd) != 0) written = false;
  if (written && rename(temporary.c_str(), path.c_str()) == 0) return;
  const std::string why = std::strerror(written ? errno : saved);
  if (fd >= 0) unlink(temporary.c_str());
  throw Error::io(fmt::format("{}: cannot write the state file: {}", path.string(), why));
}

}  // namespace kareus::runtime
