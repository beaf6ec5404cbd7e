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
  require(!text.empty() && text.size() < sizeof address.sun_path, "kareusd", "socket path", text,
          fmt::format("must be 1 to {} bytes long", sizeof address.sun_path - 1));
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

int listen_unix(const std::filesystem::path& path, unsigned mode) {
  const sockaddr_un address = address_of(path);
  if (std::filesystem::exists(path)) {
    const int other = try_connect(address);
    if (other >= 0) {
      close(other);
      throw Error(fmt::format("another kareusd is listening on {}", path.string()));
    }
    std::filesystem::remove(path);
  }
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      chmod(path.c_str(), mode) != 0 || listen(fd, 16) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) close(fd);
    throw Error(fmt::format("cannot listen on {}: {}", path.string(), why));
  }
  return fd;
}

int connect_unix(const std::filesystem::path& path) {
  const int fd = try_connect(address_of(path));
  if (fd < 0) {
    throw Error(
        fmt::format("cannot connect to kareusd at {}: {} (is kareusd running? set "
                    "KAREUSD_SOCKET to its socket)",
                    path.string(), std::strerror(errno)));
  }
  return fd;
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
