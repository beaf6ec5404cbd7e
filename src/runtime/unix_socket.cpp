// SPDX-License-Identifier: Apache-2.0
#include "unix_socket.hpp"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kareus/core/error.hpp"

namespace kareus::runtime {
namespace {

sockaddr_un address_of(const std::filesystem::path& path) {
  sockaddr_un address = {};
  address.sun_family = AF_UNIX;
  const std::string text = path.string();
  if (text.empty() || text.size() >= sizeof address.sun_path) {
    throw Error(fmt::format("socket path = {}: must be 1 to {} bytes long", text,
                            sizeof address.sun_path - 1));
  }
  std::memcpy(address.sun_path, text.c_str(), text.size() + 1);
  return address;
}

// -1 with errno set when nobody listens.
int try_connect(const sockaddr_un& address) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

}  // namespace

bool names_a_socket(const std::filesystem::path& path) {
  struct stat st = {};
  return lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

int listen_unix(const std::filesystem::path& path, std::optional<gid_t> group) {
  const sockaddr_un address = address_of(path);
  struct stat st = {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      throw Error::invalid("", field_ref("socket_path"), path.string(),
                           "exists and is not a socket; give a path that does not exist yet");
    }
    const int other = try_connect(address);
    if (other >= 0) {
      close(other);
      throw Error::io(fmt::format("another kareusd is listening on {}", path.string()));
    }
    unlink(path.c_str());
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  // 0660: the owner (root) and the group connect; peer credentials are checked again at accept.
  if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      chmod(path.c_str(), 0660) != 0 || (group && chown(path.c_str(), -1, *group) != 0) ||
      listen(fd, SOMAXCONN) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) close(fd);
    throw Error::io(fmt::format("cannot listen on {}: {}", path.string(), why));
  }
  return fd;
}

int connect_unix(const std::filesystem::path& path) {
  const int fd = try_connect(address_of(path));
  if (fd < 0) {
    throw Error::io(
        fmt::format("cannot connect to kareusd at {}: {} (is kareusd running? set "
                    "KAREUSD_SOCKET to its socket)",
                    path.string(), std::strerror(errno)));
  }
  return fd;
}

PeerCredentials peer_credentials(int fd) {
  PeerCredentials peer;
  ucred cred = {};
  socklen_t length = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) {
    throw Error::io(fmt::format("kareusd: SO_PEERCRED: {}", std::strerror(errno)));
  }
  peer.uid = cred.uid;
  peer.gid = cred.gid;
  peer.pid = cred.pid;
  // First call sizes the list (ERANGE); a kernel without SO_PEERGROUPS leaves only the primary
  // group, which is then the only one checked.
  length = 0;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, nullptr, &length) != 0 && errno == ERANGE) {
    std::vector<gid_t> groups(length / sizeof(gid_t));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &length) == 0) {
      groups.resize(length / sizeof(gid_t));
      peer.groups = std::move(groups);
    }
  }
  return peer;
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool read_line(int fd, std::string& buffer, std::string& line) {
  for (;;) {
    const auto nl = buffer.find('\n');
    if (nl != std::string::npos) {
      line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return true;
    }
    char chunk[4096];
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace kareus::runtime
