// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "kareus/core/error.hpp"
#include "kareus/core/printable.hpp"

namespace kareus {
namespace {

bool looks_numeric(const std::string& s) {
  if (s.empty()) return false;
  return std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+' ||
         s[0] == '.';
}

// Cells hold names from files and devices (a GPU's, a kernel's, a scenario's): escaped once here,
// so that no table prints a byte that drives the terminal or breaks the row.
std::vector<std::string> printable_cells(std::vector<std::string> cells) {
  for (std::string& cell : cells) cell = printable(cell);
  return cells;
}

}  // namespace

TextTable::TextTable(std::vector<std::string> header)
    : header_(printable_cells(std::move(header))) {}

void TextTable::add_row(std::vector<std::string> cells) {
  if (cells.size() != header_.size())
    throw Error(fmt::format("internal: table row has {} cells, header has {}", cells.size(),
                            header_.size()),
                ErrorKind::kInternal);
  rows_.push_back(printable_cells(std::move(cells)));
}

std::string TextTable::render() const {
  std::vector<std::size_t> width(header_.size());
  for (std::size_t c = 0; c < header_.size(); ++c) {
    width[c] = header_[c].size();
    for (const auto& r : rows_) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c) out += "  ";
      const bool right = !header && looks_numeric(cells[c]);
      out += right ? fmt::format("{:>{}}", cells[c], width[c])
                   : fmt::format("{:<{}}", cells[c], width[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_, true);
  std::size_t total = 0;
  for (auto w : width) total += w;
  out += std::string(total + 2 * (width.size() - 1), '-') + "\n";
  for (const auto& r : rows_) out += line(r, false);
  return out;
}

std::string TextTable::render_markdown() const {
  auto line = [](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (const auto& c : cells) out += " " + c + " |";
    return out + "\n";
  };
  std::string out = line(header_);
  out += "|";
  for (std::size_t c = 0; c < header_.size(); ++c) out += "---|";
  out += "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

}  // namespace kareus
