// SPDX-License-Identifier: Apache-2.0
// Text folded to a terminal's width: the CLI keeps every line of its normal output within
// kLineWidth columns, wrapping prose and long table cells at spaces.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kareus {

// The widest line a command prints on its normal output.
inline constexpr std::size_t kLineWidth = 120;

// Columns `text` takes on a terminal: its UTF-8 code points (every character the CLI prints is
// one column wide).
std::size_t display_width(std::string_view text);

// `text` (one paragraph, no newlines) in lines of at most `width` columns, broken at spaces, each
// ending in '\n'; the first starts with `first`, the others with `rest`. A word longer than a line
// stands alone on its line rather than being cut.
std::string wrap(std::string_view text, std::size_t width = kLineWidth, std::string_view first = "",
                 std::string_view rest = "");

}  // namespace kareus
