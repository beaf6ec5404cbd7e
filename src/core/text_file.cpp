#include "kareus/core/text_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "kareus/core/error.hpp"

namespace kareus {

std::string read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(fmt::format("{}: is a folder, expected a file", path.string()));
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw Error(fmt::format("{}: cannot open file for reading ({})", path.string(),
                            err != 0 ? std::strerror(err) : "unknown reason"));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw Error::io(fmt::format("{}: read failed", path.string()));
  std::string text = std::move(buffer).str();
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (std::string_view(text).substr(0, kBom.size()) == kBom) text.erase(0, kBom.size());
  return text;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\t') || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace kareus
