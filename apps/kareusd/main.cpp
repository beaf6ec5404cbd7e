// SPDX-License-Identifier: Apache-2.0
// kareusd: the Kareus clock daemon. Run it as root (or with CAP_SYS_ADMIN) next to the training
// job; the job's frequency controller then changes clocks through it (KAREUSD_SOCKET).
#include <grp.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "kareus/core/error.hpp"
#include "kareus/core/printable.hpp"
#include "kareus/nvml/nvml.hpp"
#include "kareus/runtime/daemon.hpp"
#include "kareus/version.hpp"

namespace {

// The daemon's flags for the fields of DaemonOptions its messages name.
std::string flag_of(std::string_view field) {
  if (field == "socket_path") return "--socket";
  if (field == "state_file") return "--state-file";
  return std::string(field);
}

// A group name, or a numeric gid for groups without an entry in the group database.
gid_t group_id(const std::string& text) {
  if (const group* entry = getgrnam(text.c_str())) return entry->gr_gid;
  std::size_t used = 0;
  unsigned long gid = 0;
  try {
    gid = std::stoul(text, &used, 10);
  } catch (const std::logic_error&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || gid >= 0xFFFFFFFFul) {
    throw kareus::Error("--group = " + text + ": expected a group name or a numeric gid");
  }
  return static_cast<gid_t>(gid);
}

}  // namespace

int main(int argc, char** argv) {
  kareus::runtime::DaemonOptions options;
  options.socket_path = kareus::runtime::default_daemon_socket();
  std::string group;
  CLI::App app{
      "kareusd: serves SM clock changes to Kareus frequency controllers over a Unix socket"};
  app.set_version_flag("--version", std::string("kareusd ") + kareus::kVersion);
  app.add_option("--socket", options.socket_path,
                 "Unix socket to listen on (default: "
                 "$KAREUSD_SOCKET or /run/kareus/kareusd.sock)");
  app.add_option("--state-file", options.state_file,
                 "Where the locked GPUs are recorded, so a restarted daemon resets them")
      ->capture_default_str();
  app.add_option("--group", group,
                 "Group whose members may use the daemon (the socket is mode 0660 in this group); "
                 "without it only root and the daemon's own user may");
  app.add_option("--idle-timeout", options.idle_timeout_s,
                 "Seconds after which a connection that holds no GPU and is silent, or leaves a "
                 "request unfinished or its replies unread, is closed")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (!group.empty()) options.group = group_id(group);
    if (!(options.idle_timeout_s >= 0.001 && options.idle_timeout_s <= 1e6)) {
      throw kareus::Error("--idle-timeout = " + kareus::format_number(options.idle_timeout_s) +
                          ": expected 0.001 to 1000000 seconds");
    }
    auto nvml = std::make_shared<const kareus::nvml::Nvml>();
    kareus::runtime::Daemon daemon(nvml, options);
    std::printf("kareusd: listening on %s\n", options.socket_path.c_str());
    std::fflush(stdout);
    daemon.run();
  } catch (const kareus::Error& e) {
    std::fprintf(stderr, "kareusd: %s\n", kareus::printable(e.message(flag_of)).c_str());
    return kareus::exit_code(e.kind());
  } catch (const std::exception& e) {
    // Caught so that the stack unwinds: the Daemon destructor resets every GPU still locked.
    std::fprintf(stderr, "kareusd: internal error: %s\n", kareus::printable(e.what()).c_str());
    return 3;
  }
  return 0;
}
