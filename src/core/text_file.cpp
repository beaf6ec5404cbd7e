// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/text_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "kareus/core/error.hpp"
#include "kareus/core/limits.hpp"

namespace kareus {

std::string read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(fmt::format("{}: is a folder, expected a file", path.string()));
  const auto too_big = [&] {
    return Error(fmt::format("{}: more than {} bytes (1 GiB), the most an input file may hold",
                             path.string(), kMaxInputFileBytes));
  };
  if (std::filesystem::is_regular_file(path, ec) &&
      std::filesystem::file_size(path, ec) > kMaxInputFileBytes && !ec)
    throw too_big();
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw Error(fmt::format("{}: cannot open file for reading ({})", path.string(),
                            err != 0 ? std::strerror(err) : "unknown reason"));
  }
  // Read at most one chunk past the bound also where the file system reports no size: a pipe,
  // /dev/zero, a file under /proc.
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxInputFileBytes) throw too_big();
  }
  if (in.bad()) throw Error::io(fmt::format("{}: read failed", path.string()));
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (std::string_view(text).substr(0, kBom.size()) == kBom) text.erase(0, kBom.size());
  return text;
}

}  // namespace kareus
