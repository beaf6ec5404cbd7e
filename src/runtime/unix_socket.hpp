// The few Unix-socket operations kareusd and its client share. Hand-written because none of the
// project's libraries does local sockets and the protocol is one JSON document per line.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kareus::runtime {

// A listening stream socket at `path` with permissions `mode`; replaces a stale socket file but
// refuses when another process is listening there.
int listen_unix(const std::filesystem::path& path, unsigned mode);
// A connected stream socket; throws Error naming the path when nobody listens.
int connect_unix(const std::filesystem::path& path);
// False when the peer is gone.
bool send_all(int fd, std::string_view data);
// Reads up to the next newline (not included) into `line`, keeping any surplus in `buffer`;
// false on end of file or error.
bool read_line(int fd, std::string& buffer, std::string& line);

}  // namespace kareus::runtime
