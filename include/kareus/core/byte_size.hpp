// SPDX-License-Identifier: Apache-2.0
// Sizes written the way people write them: "67108864", "6.4e7", "64MiB", "64 MB", "1GiB".
#pragma once

#include <string_view>

namespace kareus {

// Bytes in `text`: a positive number, optionally followed by B, kB/KB/MB/GB/TB (powers of 1000)
// or KiB/MiB/GiB/TiB (powers of 1024). Throws Error::invalid(where, field, text, ...) otherwise.
double parse_byte_size(std::string_view text, std::string_view where, std::string_view field);

}  // namespace kareus
