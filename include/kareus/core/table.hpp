// SPDX-License-Identifier: Apache-2.0
// Plain-text tables for terminal output: right-aligned numbers, left-aligned text, every cell
// escaped by printable() (kareus/core/printable.hpp).
#pragma once

#include <string>
#include <vector>

namespace kareus {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header);
  void add_row(std::vector<std::string> cells);
  std::string render() const;
  // Markdown (GitHub) table, for docs/benchmarks.md.
  std::string render_markdown() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace kareus
