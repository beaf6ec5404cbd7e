#include "kareus/runtime/daemon.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "kareus/core/error.hpp"
#include "unix_socket.hpp"

namespace kareus::runtime {
namespace {

// A client that sends more than this without a newline is not speaking the protocol.
constexpr std::size_t kMaxLine = 64 * 1024;

void log_line(const std::string& text) {
  std::fprintf(stderr, "kareusd: %s\n", text.c_str());
}

Json failure(const std::string& message) {
  return {{"ok", false}, {"error", message}};
}

}  // namespace

std::filesystem::path default_daemon_socket() {
  const char* env = std::getenv("KAREUSD_SOCKET");
  return env && *env ? std::filesystem::path(env) : DaemonOptions{}.socket_path;
}

Daemon::Daemon(std::shared_ptr<const nvml::Nvml> nvml, DaemonOptions options)
    : nvml_(std::move(nvml)), options_(std::move(options)), device_count_(nvml_->device_count()) {
  reset_left_over_gpus();
  listen_fd_ = listen_unix(options_.socket_path, options_.socket_mode);
}

Daemon::~Daemon() {
  for (unsigned gpu : std::set<unsigned>(locked_)) reset(gpu);
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    std::error_code ignored;
    std::filesystem::remove(options_.socket_path, ignored);
  }
}

void Daemon::reset_left_over_gpus() {
  if (!std::filesystem::exists(options_.state_file)) return;
  std::vector<unsigned> gpus;
  try {
    const JsonDocument doc = JsonDocument::load_file(options_.state_file);
    const JsonValue list = doc.root().at("locked_gpus");
    for (std::size_t i = 0; i < list.size(); ++i) {
      gpus.push_back(static_cast<unsigned>(list.at(i).as_integer()));
    }
  } catch (const Error& e) {
    // Unknown what the previous daemon locked: reset them all rather than leave one locked.
    log_line(fmt::format("{}; resetting every GPU", e.what()));
    gpus.clear();
    for (unsigned gpu = 0; gpu < device_count_; ++gpu) gpus.push_back(gpu);
  }
  for (unsigned gpu : gpus) {
    if (gpu >= device_count_) continue;
    log_line(fmt::format("gpu {} was left locked by a previous kareusd; resetting it", gpu));
    locked_.insert(gpu);
    reset(gpu);
  }
  save_state();
}

void Daemon::save_state() const {
  const Json state = {{"locked_gpus", std::vector<unsigned>(locked_.begin(), locked_.end())}};
  write_file_atomically(options_.state_file, state.dump() + "\n");
}

void Daemon::reset(unsigned gpu) {
  try {
    nvml_->reset_locked_sm_clocks(gpu);
    locked_.erase(gpu);
  } catch (const Error& e) {
    log_line(fmt::format("could not reset gpu {}: {}", gpu, e.what()));
  }
  save_state();
}

unsigned Daemon::gpu_of(const JsonValue& request) const {
  const JsonValue gpu = request.at("gpu");
  const std::int64_t index = gpu.as_integer();
  if (index < 0 || index >= static_cast<std::int64_t>(device_count_)) {
    gpu.fail(fmt::format("this machine has GPUs 0..{}", static_cast<int>(device_count_) - 1));
  }
  return static_cast<unsigned>(index);
}

unsigned Daemon::owned_gpu(int client, const JsonValue& request) const {
  const unsigned gpu = gpu_of(request);
  auto it = owner_.find(gpu);
  if (it == owner_.end() || it->second != client) {
    request.at("gpu").fail("this client has not registered that GPU");
  }
  return gpu;
}

Json Daemon::handle_register(int client, const JsonValue& request) {
  const JsonValue gpus = request.at("gpus");
  if (!gpus.is_array() || gpus.size() == 0) gpus.fail("expected a non-empty array of GPU indices");
  std::vector<unsigned> wanted;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const JsonValue item = gpus.at(i);
    const std::int64_t gpu = item.as_integer();
    if (gpu < 0 || gpu >= static_cast<std::int64_t>(device_count_)) {
      item.fail(fmt::format("this machine has GPUs 0..{}", static_cast<int>(device_count_) - 1));
    }
    auto it = owner_.find(static_cast<unsigned>(gpu));
    if (it != owner_.end() && it->second != client) item.fail("registered by another client");
    wanted.push_back(static_cast<unsigned>(gpu));
  }
  Json out = Json::array();
  for (unsigned gpu : wanted) {
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

Json Daemon::handle_set(int client, const JsonValue& request) {
  const unsigned gpu = owned_gpu(client, request);
  const JsonValue clock = request.at("clock_mhz");
  const std::int64_t mhz = clock.as_integer();
  const auto& supported = supported_.at(gpu);
  if (std::find(supported.begin(), supported.end(), mhz) == supported.end()) {
    clock.fail(fmt::format("gpu {} supports {} to {} MHz in its listed steps", gpu,
                           supported.empty() ? 0 : supported.back(),
                           supported.empty() ? 0 : supported.front()));
  }
  locked_.insert(gpu);
  save_state();  // before the call: a daemon killed right after it must still reset this GPU
  nvml_->set_locked_sm_clock(gpu, MHz(static_cast<double>(mhz)));
  return {{"ok", true}};
}

Json Daemon::handle_reset(int client, const JsonValue& request) {
  const unsigned gpu = owned_gpu(client, request);
  nvml_->reset_locked_sm_clocks(gpu);
  locked_.erase(gpu);
  save_state();
  return {{"ok", true}};
}

Json Daemon::handle_read_energy(const JsonValue& request) {
  const unsigned gpu = gpu_of(request);
  return {{"ok", true},
          {"energy_j", nvml_->total_energy(gpu).value()},
          {"power_w", nvml_->power(gpu).value()}};
}

Json Daemon::handle(int client, const std::string& line) {
  try {
    const JsonDocument doc = JsonDocument::parse(line, "request");
    const JsonValue request = doc.root();
    const std::string op = request.string("op");
    if (op == "register") return handle_register(client, request);
    if (op == "set_sm_clock") return handle_set(client, request);
    if (op == "reset_sm_clock") return handle_reset(client, request);
    if (op == "read_energy") return handle_read_energy(request);
    request.at("op").fail("expected register, set_sm_clock, reset_sm_clock or read_energy");
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
      log_line(fmt::format("client {} left gpu {} locked; resetting it", client, it->first));
      reset(it->first);
    }
    it = owner_.erase(it);
  }
}

void Daemon::run() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigprocmask(SIG_BLOCK, &signals, nullptr);
  const int signal_fd = signalfd(-1, &signals, SFD_CLOEXEC);
  if (signal_fd < 0) throw Error(fmt::format("signalfd: {}", std::strerror(errno)));
  // A client that dies mid-write must not kill the daemon.
  ::signal(SIGPIPE, SIG_IGN);

  std::map<int, std::string> buffers;  // client fd -> bytes after the last newline
  for (;;) {
    std::vector<pollfd> fds = {{signal_fd, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const auto& entry : buffers) fds.push_back({entry.first, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("poll: {}", std::strerror(errno)));
    }
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) {
      const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client >= 0) buffers[client];
    }
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      const int client = fds[i].fd;
      std::string& buffer = buffers[client];
      char chunk[4096];
      const ssize_t n = read(client, chunk, sizeof chunk);
      bool open = n > 0;
      if (open) buffer.append(chunk, static_cast<std::size_t>(n));
      for (std::size_t nl; open && (nl = buffer.find('\n')) != std::string::npos;) {
        const std::string reply = reply_line(handle(client, buffer.substr(0, nl)));
        buffer.erase(0, nl + 1);
        open = send_all(client, reply);
      }
      if (open && buffer.size() > kMaxLine) open = false;
      if (!open) {
        disconnect(client);
        close(client);
        buffers.erase(client);
      }
    }
  }
  close(signal_fd);
  for (const auto& entry : buffers) {
    disconnect(entry.first);
    close(entry.first);
  }
}

}  // namespace kareus::runtime
