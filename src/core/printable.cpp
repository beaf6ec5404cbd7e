// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/printable.hpp"

#include <fmt/format.h>

namespace kareus {
namespace {

// Written here rather than taken from a Unicode library: the decoder is the standard UTF-8 one
// (RFC 3629) and the list of code points to escape is short and fixed.

// C1 controls (CSI is U+009B), the line and paragraph separators, and the bidirectional
// formatting characters of Unicode UAX #9 (ALM, LRM, RLM, LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI,
// PDI), which reorder what follows them on screen.
bool unsafe(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
         (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

// The length of the well-formed UTF-8 sequence that starts text[i] (a byte >= 0x80) and its code
// point, or 0: a stray continuation byte, an overlong form, a surrogate, a code point beyond
// U+10FFFF or a cut sequence.
std::size_t decode(std::string_view text, std::size_t i, char32_t& cp) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    cp = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    cp = lead & 0x0f;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    cp = lead & 0x07;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned char next = byte(k);
    if (next < (k == 1 ? low : 0x80) || next > (k == 1 ? high : 0xbf)) return 0;
    cp = (cp << 6) | (next & 0x3f);
  }
  return length;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if ((byte < 0x20 && byte != '\t') || byte == 0x7f) {
        out += fmt::format("\\x{:02x}", byte);
      } else {
        out += text[i];
      }
      ++i;
      continue;
    }
    char32_t cp = 0;
    const std::size_t length = decode(text, i, cp);
    if (length == 0) {
      out += fmt::format("\\x{:02x}", byte);
      ++i;
    } else {
      if (unsafe(cp)) {
        out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(cp));
      } else {
        out += text.substr(i, length);
      }
      i += length;
    }
  }
  return out;
}

}  // namespace kareus
