// SPDX-License-Identifier: Apache-2.0
// A kareusd connection for tests that must misbehave (bad bytes, never reading, stalling) or must
// not hang when the daemon does: every wait is bounded, unlike DaemonClient's.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

namespace kareus::testing {

class RawClient {
 public:
  explicit RawClient(const std::filesystem::path& socket) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un address = {};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
    if (fd_ < 0 || connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      throw std::runtime_error("cannot connect to " + socket.string() + ": " +
                               std::strerror(errno));
    }
  }
  ~RawClient() { close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  // Sends all of `data` unless the daemon closed the connection or stopped reading for
  // `timeout_ms`; false then.
  bool send(std::string data, int timeout_ms = 20000) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n > 0) {
        data.erase(0, static_cast<std::size_t>(n));
      } else if (n < 0 && errno == EAGAIN) {
        pollfd p{fd_, POLLOUT, 0};
        if (poll(&p, 1, timeout_ms) <= 0) return false;
      } else {
        return false;
      }
    }
    return true;
  }
  // The next reply line; nullopt when the connection ends or nothing comes for `timeout_ms`.
  std::optional<std::string> read_line(int timeout_ms = 20000) {
    for (;;) {
      const auto nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      if (!fill(timeout_ms)) return std::nullopt;
    }
  }
  std::optional<std::string> request(const std::string& line) {
    if (!send(line + "\n")) return std::nullopt;
    return read_line();
  }
  // True when the daemon closes the connection within `timeout_ms` (replies are discarded).
  bool closed_by_daemon(int timeout_ms = 20000) {
    while (fill(timeout_ms)) buffer_.clear();
    return eof_;
  }

 private:
  // Appends what arrives within `timeout_ms`; false on end of file, error or timeout.
  bool fill(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) return false;
    char chunk[4096];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n <= 0) {
      eof_ = n == 0 || errno == ECONNRESET;
      return false;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  std::string buffer_;
  bool eof_ = false;
};

}  // namespace kareus::testing
