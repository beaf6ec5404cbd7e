// SPDX-License-Identifier: Apache-2.0
// kareusd's event loop: one thread, poll() over the signals, the listening socket and every
// connection. Nothing in it blocks: sockets are non-blocking, each connection's unsent replies are
// bounded, a connection that stalls is closed (its GPUs reset), and the number of connections is
// kept below the file-descriptor limit, so no client can freeze or spin the daemon for the others.
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "kareus/core/error.hpp"
#include "kareus/runtime/daemon.hpp"
#include "unix_socket.hpp"

namespace kareus::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// The longest request, without its newline (docs/runtime.md): a longer one is not the protocol.
constexpr std::size_t kMaxLine = 64 * 1024;
// Replies a client has not read. The largest reply (register of every GPU of an 8-GPU machine)
// is a few KiB and DaemonClient waits for each reply, so a client past this is not reading.
constexpr std::size_t kMaxQueued = 64 * 1024;
// Descriptors left free at the connection limit: the state file and NVML still need some.
constexpr rlim_t kSpareFds = 16;
// accept() rests this long after EMFILE or ENFILE caused outside the connection limit, instead
// of being woken again at once by the same pending connection.
constexpr auto kAcceptPause = std::chrono::milliseconds(100);

struct Connection {
  PeerCredentials peer;
  std::string in;              // bytes after the last complete request
  std::string out;             // replies the client has not taken yet
  Clock::time_point progress;  // connect, last complete request or last reply bytes taken
  bool closing = false;        // answered an overlong line; closed once the answer is sent
};

bool allowed(const PeerCredentials& peer, const std::optional<gid_t>& group) {
  if (peer.uid == 0 || peer.uid == geteuid()) return true;
  return group && (peer.gid == *group ||
                   std::find(peer.groups.begin(), peer.groups.end(), *group) != peer.groups.end());
}

std::string who(int fd, const PeerCredentials& peer) {
  return fmt::format("client {} (uid {}, pid {})", fd, peer.uid, peer.pid);
}

// SIGINT, SIGTERM, SIGHUP and SIGQUIT end the daemon in order (GPUs reset) through a signalfd.
int block_terminating_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  for (int signo : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&signals, signo);
  sigprocmask(SIG_BLOCK, &signals, nullptr);
  const int fd = signalfd(-1, &signals, SFD_CLOEXEC);
  if (fd < 0) throw Error::io(fmt::format("signalfd: {}", std::strerror(errno)));
  // A client that dies mid-reply must not kill the daemon (sends also pass MSG_NOSIGNAL).
  ::signal(SIGPIPE, SIG_IGN);
  return fd;
}

class Server {
 public:
  Server(Daemon& daemon, int listen_fd, const DaemonOptions& options)
      : daemon_(daemon),
        listen_fd_(listen_fd),
        options_(options),
        signal_fd_(block_terminating_signals()),
        idle_(std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(options.idle_timeout_s))) {
    rlimit limit = {};
    getrlimit(RLIMIT_NOFILE, &limit);
    const rlim_t in_use = static_cast<rlim_t>(signal_fd_) + 1 + kSpareFds;
    max_connections_ = limit.rlim_cur > in_use ? static_cast<std::size_t>(limit.rlim_cur - in_use)
                                               : std::size_t{1};
  }
  ~Server() {
    for (auto& [fd, connection] : connections_) {
      daemon_.disconnect(fd);
      close(fd);
    }
    close(signal_fd_);
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Returns on a terminating signal.
  void serve() {
    for (;;) {
      std::vector<pollfd> fds = {{signal_fd_, POLLIN, 0}, {-1, POLLIN, 0}};
      // A negative descriptor is skipped by poll(): full or resting, the backlog waits.
      if (connections_.size() < max_connections_ && Clock::now() >= accept_resumes_) {
        fds[1].fd = listen_fd_;
      }
      for (const auto& [fd, c] : connections_) {
        fds.push_back(
            {fd, static_cast<short>((c.closing ? 0 : POLLIN) | (c.out.empty() ? 0 : POLLOUT)), 0});
      }
      if (poll(fds.data(), fds.size(), timeout_ms()) < 0) {
        if (errno == EINTR) continue;
        throw Error::io(fmt::format("poll: {}", std::strerror(errno)));
      }
      if (fds[0].revents) {
        signalfd_siginfo info = {};
        if (read(signal_fd_, &info, sizeof info) == sizeof info) {
          daemon_log(fmt::format("{}: resetting the locked GPUs and exiting",
                                 strsignal(static_cast<int>(info.ssi_signo))));
        }
        return;
      }
      if (fds[1].revents) accept_pending();
      for (std::size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents) serve(fds[i].fd, fds[i].revents);
      }
      close_idle();
    }
  }

 private:
  // The connections the idle timeout applies to: holding no GPU, or stalled halfway.
  bool may_idle_out(int fd, const Connection& c) const {
    return !c.in.empty() || !c.out.empty() || !daemon_.holds_gpu(fd);
  }

  int timeout_ms() const {
    auto next = Clock::time_point::max();
    if (accept_resumes_ > Clock::now()) next = accept_resumes_;
    for (const auto& [fd, c] : connections_) {
      if (may_idle_out(fd, c)) next = std::min(next, c.progress + idle_);
    }
    if (next == Clock::time_point::max()) return -1;
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()).count();
    return static_cast<int>(std::clamp<decltype(wait)>(wait, 0, 60 * 60 * 1000));
  }

  void accept_pending() {
    while (connections_.size() < max_connections_) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Logged once per episode, not once per pause.
          if (!accept_failing_) {
            daemon_log(fmt::format("cannot accept connections: {}; retrying every {} ms",
                                   std::strerror(errno), kAcceptPause.count()));
          }
          accept_failing_ = true;
          accept_resumes_ = Clock::now() + kAcceptPause;
        }
        return;  // EAGAIN: none left; ECONNABORTED and the like: poll() reports the rest
      }
      accept_failing_ = false;
      PeerCredentials peer;
      try {
        peer = peer_credentials(fd);
      } catch (const Error& e) {
        daemon_log(e.what());
        close(fd);
        continue;
      }
      if (!allowed(peer, options_.group)) {
        refuse(fd, peer);
        continue;
      }
      daemon_log(fmt::format("{} connected", who(fd, peer)));
      daemon_.connect(fd, {peer.uid, peer.pid});
      connections_[fd] = Connection{peer, {}, {}, Clock::now(), false};
    }
  }

  void refuse(int fd, const PeerCredentials& peer) const {
    daemon_log(fmt::format("refused {}: only root, uid {}{} may connect", who(fd, peer), geteuid(),
                           options_.group ? fmt::format(" and members of group {}", *options_.group)
                                          : std::string(" (no group given)")));
    const std::string reply = Daemon::reply_line(
        {{"ok", false},
         {"error", fmt::format("uid {} may not use kareusd (root, uid {} and members of its "
                               "group may)",
                               peer.uid, geteuid())}});
    // A fresh socket's buffer takes one line; a client that is gone just misses it.
    const ssize_t ignored = send(fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
    close(fd);
  }

  void serve(int fd, short revents) {
    Connection& c = connections_.at(fd);
    if (!c.closing && (revents & (POLLIN | POLLHUP | POLLERR))) {
      char chunk[4096];  // one read per round: a flooding client cannot starve the others
      const ssize_t n = read(fd, chunk, sizeof chunk);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return drop(fd, "disconnected");
      if (n > 0) {
        c.in.append(chunk, static_cast<std::size_t>(n));
        answer(fd, c);
      }
    }
    if (!flush(c, fd)) return drop(fd, "disconnected");
    if (c.out.size() > kMaxQueued) {
      return drop(fd, fmt::format("does not read its replies ({} bytes waiting); dropping it",
                                  c.out.size()));
    }
    if (c.closing && c.out.empty()) return drop(fd, "sent an overlong line; closing it");
  }

  void answer(int fd, Connection& c) {
    while (c.out.size() <= kMaxQueued) {
      const std::size_t nl = c.in.find('\n');
      // A request is at most kMaxLine bytes before its newline, whether or not the newline came
      // in the same read.
      if ((nl == std::string::npos ? c.in.size() : nl) > kMaxLine) {
        c.out += Daemon::reply_line(
            {{"ok", false},
             {"error",
              fmt::format("request: longer than {} bytes; closing the connection", kMaxLine)}});
        c.in.clear();
        c.closing = true;
        return;
      }
      if (nl == std::string::npos) return;
      c.out += Daemon::reply_line(daemon_.handle(fd, c.in.substr(0, nl)));
      c.in.erase(0, nl + 1);
      c.progress = Clock::now();
    }
  }

  // Sends what the socket takes now; false when the client is gone.
  static bool flush(Connection& c, int fd) {
    while (!c.out.empty()) {
      const ssize_t n = send(fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n > 0) {
        c.out.erase(0, static_cast<std::size_t>(n));
        c.progress = Clock::now();
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        return n < 0 && errno == EAGAIN;
      }
    }
    return true;
  }

  void close_idle() {
    const auto now = Clock::now();
    std::vector<int> idle;
    for (const auto& [fd, c] : connections_) {
      if (may_idle_out(fd, c) && now - c.progress >= idle_) idle.push_back(fd);
    }
    for (int fd : idle) {
      drop(fd, fmt::format("was idle for {} s; closing it", options_.idle_timeout_s));
    }
  }

  // Resets the client's locked GPUs before closing, so that its end of file means they are reset.
  void drop(int fd, const std::string& why) {
    daemon_log(fmt::format("{} {}", who(fd, connections_.at(fd).peer), why));
    daemon_.disconnect(fd);
    close(fd);
    connections_.erase(fd);
  }

  Daemon& daemon_;
  int listen_fd_;
  const DaemonOptions& options_;
  int signal_fd_;
  Clock::duration idle_;
  std::size_t max_connections_ = 1;
  Clock::time_point accept_resumes_;
  bool accept_failing_ = false;
  std::map<int, Connection> connections_;
};

}  // namespace

void Daemon::run() {
  Server(*this, listen_fd_, options_).serve();
}

}  // namespace kareus::runtime
