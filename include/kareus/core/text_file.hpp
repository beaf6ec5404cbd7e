// SPDX-License-Identifier: Apache-2.0
// Reading an input file whole, with the messages a user needs when it is not one: a folder, a
// missing or unreadable path. Every reader of JSON and CSV goes through here.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kareus {

// The bytes of `path`, without a leading UTF-8 byte-order mark (spreadsheets write one).
// Throws kareus::Error naming the path when it is a folder or cannot be read.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace kareus
