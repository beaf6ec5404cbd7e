// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/wrap.hpp"

#include <algorithm>

namespace kareus {

std::size_t display_width(std::string_view text) {
  std::size_t columns = 0;
  for (const char c : text) columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return columns;
}

std::string wrap(std::string_view text, std::size_t width, std::string_view first,
                 std::string_view rest) {
  std::string out(first);
  std::size_t used = display_width(first);
  bool line_empty = true;
  std::size_t pos = 0;
  while (pos < text.size()) {
    // A word with the spaces before it, which it keeps on its line (aligned columns stay
    // aligned) and drops where the line breaks.
    const std::size_t start = std::min(text.find_first_not_of(' ', pos), text.size());
    if (start == text.size()) break;
    const std::size_t end = std::min(text.find(' ', start), text.size());
    const std::string_view gap = text.substr(pos, start - pos);
    const std::string_view word = text.substr(start, end - start);
    const std::size_t w = display_width(word);
    if (!line_empty && used + gap.size() + w > width) {
      out += '\n';
      out += rest;
      used = display_width(rest);
    } else {
      out += gap;
      used += gap.size();
    }
    out += word;
    used += w;
    line_empty = false;
    pos = end;
  }
  return out + '\n';
}

}  // namespace kareus
