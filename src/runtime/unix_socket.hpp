// SPDX-License-Identifier: Apache-2.0
// The few Unix-socket operations kareusd and its client share. Hand-written because none of the
// project's libraries does local sockets and the protocol is one JSON document per line.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kareus::runtime {

// A listening, non-blocking stream socket at `path`, mode 0660, in `group` when given. Replaces a
// stale socket but refuses when another process listens there or when anything other than a
// socket (a file, a directory, a symbolic link) is at `path`: that is never deleted.
int listen_unix(const std::filesystem::path& path, std::optional<gid_t> group);
// Whether `path` still names a socket (so the daemon removes only what it created).
bool names_a_socket(const std::filesystem::path& path);
// A connected stream socket; throws Error naming the path when nobody listens.
int connect_unix(const std::filesystem::path& path);
// Who is at the other end of a connected socket, as the kernel recorded it at connect().
struct PeerCredentials {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
  std::vector<gid_t> groups;  // supplementary groups (SO_PEERGROUPS, Linux 4.13+)
};
PeerCredentials peer_credentials(int fd);

// False when the peer is gone.
bool send_all(int fd, std::string_view data);
// Reads up to the next newline (not included) into `line`, keeping any surplus in `buffer`;
// false on end of file or error.
bool read_line(int fd, std::string& buffer, std::string& line);

}  // namespace kareus::runtime
