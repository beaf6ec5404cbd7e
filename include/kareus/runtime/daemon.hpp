// SPDX-License-Identifier: Apache-2.0
// kareusd, the clock daemon: holds privileged NVML access so that training processes need no root.
// Clients connect to a Unix stream socket and speak JSON lines (docs/runtime.md): register GPUs,
// set and reset their SM clock, read energy. Only root, the daemon's own user and members of the
// configured group may connect. A GPU belongs to one client at a time, and only that client or
// root may change or release it; only clocks the GPU supports are accepted, and a GPU is reset when
// its client disconnects, dies, or is dropped for not reading its replies. The locked GPUs are kept
// in a state file so that a restarted daemon resets what a killed one left.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/nvml/nvml.hpp"
#include "kareus/runtime/daemon_request.hpp"

namespace kareus::runtime {

struct DaemonOptions {
  std::filesystem::path socket_path = "/run/kareus/kareusd.sock";
  // On tmpfs by default: after a reboot the driver has reset every clock anyway.
  std::filesystem::path state_file = "/run/kareus/kareusd-state.json";
  // Members of this group may connect besides root and the daemon's own user; the socket (mode
  // 0660) belongs to it.
  std::optional<gid_t> group;
  // A connection that holds no GPU and sends nothing, or that leaves a request unfinished or its
  // replies unread, for this long is closed.
  double idle_timeout_s = 60.0;
};

// Who is at the other end of a connection, as the kernel recorded it.
struct DaemonPeer {
  uid_t uid = 0;
  pid_t pid = 0;
};

class Daemon {
 public:
  // Binds the socket, then resets the GPUs a previous daemon left locked; throws Error when the
  // folder of the socket or of the state file does not exist (only /run/kareus is created), the
  // socket cannot be bound (another kareusd serves there: nothing is reset) or the state file
  // cannot be written (after those resets).
  Daemon(std::shared_ptr<const nvml::Nvml> nvml, DaemonOptions options);
  // Resets every GPU still locked and removes the socket.
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Serves clients until SIGINT, SIGTERM, SIGHUP or SIGQUIT (daemon_loop.cpp).
  void run();
  // Records who `client` is: a GPU it holds may then be changed or released by root as well, and
  // refusals name it as the holder.
  void connect(int client, DaemonPeer peer);
  // One request line of client `client` -> one response document (exposed for tests). Never
  // throws: any failure is an {"ok": false, "error": ...} reply. A client never connect()ed is
  // not root.
  Json handle(int client, const std::string& line);
  // The response as one line of valid UTF-8 JSON, whatever bytes the error message quotes.
  static std::string reply_line(const Json& reply);
  // Releases the client's GPUs, resetting the locked ones.
  void disconnect(int client);
  bool holds_gpu(int client) const;

 private:
  Json handle_register(int client, const DaemonRequest& request);
  Json handle_set(int client, const DaemonRequest& request);
  Json handle_reset(int client, const DaemonRequest& request);
  Json handle_read_energy(const DaemonRequest& request);
  // Throws unless `client` registered `gpu`, or is root and another client holds it; returns
  // whether another client holds it.
  bool check_may_change(int client, unsigned gpu) const;
  // "client 7 (uid 1001, pid 4242)", or "another client" when it never connect()ed.
  std::string describe(int client) const;
  void reset(unsigned gpu);
  void reset_left_over_gpus();
  void stop_listening();
  // Logs instead of throwing: called while resetting, where nothing may stop the next reset.
  void save_state() const;

  std::shared_ptr<const nvml::Nvml> nvml_;
  DaemonOptions options_;
  unsigned device_count_;
  int listen_fd_ = -1;
  std::map<unsigned, int> owner_;                        // gpu -> client
  std::map<int, DaemonPeer> peers_;                      // client -> credentials
  std::map<unsigned, std::vector<unsigned>> supported_;  // gpu -> MHz, filled at registration
  std::set<unsigned> locked_;
};

// $KAREUSD_SOCKET, else DaemonOptions{}.socket_path.
std::filesystem::path default_daemon_socket();

// One line on stderr, "kareusd: <text>", for the daemon's log.
void daemon_log(const std::string& text);

}  // namespace kareus::runtime
