// SPDX-License-Identifier: Apache-2.0
#include "kareus/runtime/daemon.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "daemon_state.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/printable.hpp"
#include "unix_socket.hpp"

namespace kareus::runtime {
namespace {

Json failure(const std::string& message) {
  return {{"ok", false}, {"error", message}};
}

// The folder kareusd may create: where the systemd unit and the defaults put the socket and the
// state file. Any other folder must exist, so that a root daemon never makes one where a
// mistyped --socket points.
const std::filesystem::path kRunDir = "/run/kareus";

void require_folder(const std::filesystem::path& file, std::string_view field) {
  const std::filesystem::path folder = file.parent_path();
  std::error_code ec;
  if (folder.empty() || std::filesystem::is_directory(folder, ec)) return;
  if (folder == kRunDir && !std::filesystem::exists(folder, ec)) {
    std::filesystem::create_directory(folder, ec);
    if (!ec) std::filesystem::permissions(folder, std::filesystem::perms(0755), ec);
    if (ec)
      throw Error::io(fmt::format("{} = {}: cannot create {}: {}", field, file.string(),
                                  folder.string(), ec.message()));
    return;
  }
  throw Error(
      fmt::format("{} = {}: folder {} does not exist; create it first (kareusd creates "
                  "only {})",
                  field, file.string(), folder.string(), kRunDir.string()));
}

}  // namespace

void daemon_log(const std::string& text) {
  // Log lines quote what clients sent and what NVML reports.
  std::fprintf(stderr, "kareusd: %s\n", printable(text).c_str());
}

std::filesystem::path default_daemon_socket() {
  const char* env = std::getenv("KAREUSD_SOCKET");
  return env && *env ? std::filesystem::path(env) : DaemonOptions{}.socket_path;
}

Daemon::Daemon(std::shared_ptr<const nvml::Nvml> nvml, DaemonOptions options)
    : nvml_(std::move(nvml)), options_(std::move(options)), device_count_(nvml_->device_count()) {
  require_folder(options_.socket_path, field_ref("socket_path"));
  require_folder(options_.state_file, field_ref("state_file"));
  // The socket first: it refuses when another kareusd serves there, which must keep its clocks
  // and its state file. Clients wait in the backlog until run().
  listen_fd_ = listen_unix(options_.socket_path, options_.group);
  try {
    reset_left_over_gpus();
    // A daemon that cannot record its locks would have to refuse every one: say so at start.
    write_daemon_state(options_.state_file, locked_);
  } catch (...) {
    stop_listening();
    throw;
  }
}

Daemon::~Daemon() {
  for (unsigned gpu : std::set<unsigned>(locked_)) reset(gpu);
  stop_listening();
}

void Daemon::stop_listening() {
  close(listen_fd_);
  if (names_a_socket(options_.socket_path)) unlink(options_.socket_path.c_str());
}

void Daemon::reset_left_over_gpus() {
  DaemonState state = read_daemon_state(options_.state_file);
  if (state.problem) {
    // Unknown what the previous daemon locked: reset them all rather than leave one locked.
    daemon_log(fmt::format("{}; resetting every GPU", *state.problem));
    state.locked_gpus.clear();
    for (unsigned gpu = 0; gpu < device_count_; ++gpu) state.locked_gpus.push_back(gpu);
  }
  for (unsigned gpu : state.locked_gpus) {
    if (gpu >= device_count_) continue;
    daemon_log(fmt::format("gpu {} was left locked by a previous kareusd; resetting it", gpu));
    locked_.insert(gpu);
    reset(gpu);
  }
}

void Daemon::save_state() const {
  try {
    write_daemon_state(options_.state_file, locked_);
  } catch (const Error& e) {
    daemon_log(e.what());
  }
}

void Daemon::reset(unsigned gpu) {
  try {
    nvml_->reset_locked_sm_clocks(gpu);
    locked_.erase(gpu);
  } catch (const Error& e) {
    daemon_log(fmt::format("could not reset gpu {}: {}", gpu, e.what()));
  }
  save_state();
}

void Daemon::connect(int client, DaemonPeer peer) {
  peers_[client] = peer;
}

std::string Daemon::describe(int client) const {
  const auto it = peers_.find(client);
  if (it == peers_.end()) return "another client";
  return fmt::format("client {} (uid {}, pid {})", client, it->second.uid, it->second.pid);
}

bool Daemon::check_may_change(int client, unsigned gpu) const {
  const auto it = owner_.find(gpu);
  if (it == owner_.end())
    throw Error::invalid("request", "/gpu", std::to_string(gpu),
                         "this client has not registered that GPU");
  if (it->second == client) return false;
  const auto peer = peers_.find(client);
  if (peer != peers_.end() && peer->second.uid == 0) return true;
  throw Error::invalid("request", "/gpu", std::to_string(gpu),
                       fmt::format("held by {}; only that client or root may change or release it",
                                   describe(it->second)));
}

Json Daemon::handle_register(int client, const DaemonRequest& request) {
  for (std::size_t i = 0; i < request.gpus.size(); ++i) {
    auto it = owner_.find(request.gpus[i]);
    if (it != owner_.end() && it->second != client)
      throw Error::invalid("request", fmt::format("/gpus/{}", i), std::to_string(request.gpus[i]),
                           fmt::format("registered by {}", describe(it->second)));
  }
  Json out = Json::array();
  for (unsigned gpu : request.gpus) {
    if (!supported_.contains(gpu)) {
      std::vector<unsigned> clocks;
      for (MHz f : nvml_->supported_sm_clocks(gpu))
        clocks.push_back(static_cast<unsigned>(f.value()));
      supported_[gpu] = clocks;
    }
    owner_[gpu] = client;
    out.push_back(
        {{"gpu", gpu}, {"name", nvml_->name(gpu)}, {"supported_sm_clocks_mhz", supported_[gpu]}});
  }
  return {{"ok", true}, {"gpus", out}};
}

Json Daemon::handle_set(int client, const DaemonRequest& request) {
  const unsigned gpu = request.gpu;
  if (check_may_change(client, gpu))
    daemon_log(fmt::format("root {} sets gpu {}, held by {}, to {} MHz", describe(client), gpu,
                           describe(owner_.at(gpu)), request.clock_mhz));
  const auto& supported = supported_.at(gpu);
  if (std::find(supported.begin(), supported.end(), request.clock_mhz) == supported.end()) {
    throw Error::invalid("request", "/clock_mhz", std::to_string(request.clock_mhz),
                         fmt::format("gpu {} supports {} to {} MHz in its listed steps", gpu,
                                     supported.empty() ? 0 : supported.back(),
                                     supported.empty() ? 0 : supported.front()));
  }
  // Recorded before the call: a daemon killed right after it must still reset this GPU. Without
  // the record nobody could, so the clock is not changed.
  std::set<unsigned> locked = locked_;
  locked.insert(gpu);
  try {
    write_daemon_state(options_.state_file, locked);
  } catch (const Error& e) {
    throw Error::device(fmt::format("{}; the clock of gpu {} was not changed", e.what(), gpu));
  }
  locked_ = std::move(locked);
  nvml_->set_locked_sm_clock(gpu, MHz(static_cast<double>(request.clock_mhz)));
  return {{"ok", true}};
}

Json Daemon::handle_reset(int client, const DaemonRequest& request) {
  const bool for_another = check_may_change(client, request.gpu);
  nvml_->reset_locked_sm_clocks(request.gpu);
  locked_.erase(request.gpu);
  save_state();
  if (for_another) {
    // Released: the holder no longer has it, and another client may register it.
    daemon_log(fmt::format("root {} released gpu {}, held by {}", describe(client), request.gpu,
                           describe(owner_.at(request.gpu))));
    owner_.erase(request.gpu);
  }
  return {{"ok", true}};
}

Json Daemon::handle_read_energy(const DaemonRequest& request) {
  return {{"ok", true},
          {"energy_j", nvml_->total_energy(request.gpu).value()},
          {"power_w", nvml_->power(request.gpu).value()}};
}

Json Daemon::handle(int client, const std::string& line) {
  try {
    const DaemonRequest request = parse_daemon_request(line, device_count_);
    switch (request.op) {
      case DaemonOp::kRegister:
        return handle_register(client, request);
      case DaemonOp::kSetSmClock:
        return handle_set(client, request);
      case DaemonOp::kResetSmClock:
        return handle_reset(client, request);
      case DaemonOp::kReadEnergy:
        return handle_read_energy(request);
    }
    throw Error("request: unknown op", ErrorKind::kInternal);
  } catch (const Error& e) {
    return failure(e.what());
  } catch (const std::exception& e) {
    // Whatever one request line does, the daemon keeps serving and keeping its GPUs' state.
    return failure(fmt::format("request: cannot be handled: {}", e.what()));
  }
}

std::string Daemon::reply_line(const Json& reply) {
  // Error messages quote request values, cut to 60 bytes, possibly inside a UTF-8 sequence: a
  // strict dump would throw on them.
  return reply.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

void Daemon::disconnect(int client) {
  for (auto it = owner_.begin(); it != owner_.end();) {
    if (it->second != client) {
      ++it;
      continue;
    }
    if (locked_.contains(it->first)) {
      daemon_log(fmt::format("client {} left gpu {} locked; resetting it", client, it->first));
      reset(it->first);
    }
    it = owner_.erase(it);
  }
  peers_.erase(client);
}

bool Daemon::holds_gpu(int client) const {
  return std::any_of(owner_.begin(), owner_.end(),
                     [client](const auto& entry) { return entry.second == client; });
}

}  // namespace kareus::runtime
