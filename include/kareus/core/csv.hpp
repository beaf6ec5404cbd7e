// SPDX-License-Identifier: Apache-2.0
// CSV reading with precise errors: every value knows its file, line and column, so a bad cell is
// reported as "file:line: column 'x' = 'v': what is allowed".
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kareus {

class CsvTable;

class CsvRow {
 public:
  CsvRow(const CsvTable& table, std::size_t index) : table_(&table), index_(index) {}

  std::size_t line() const;  // 1-based line in the file
  bool has(std::string_view column) const;
  // Raw cell; throws if the column is absent from the header.
  const std::string& text(std::string_view column) const;
  // Empty cells count as missing.
  std::optional<std::string> optional_text(std::string_view column) const;
  double number(std::string_view column) const;
  double positive_number(std::string_view column) const;
  double non_negative_number(std::string_view column) const;
  std::optional<double> optional_number(std::string_view column) const;
  long integer(std::string_view column) const;
  long positive_integer(std::string_view column) const;
  [[noreturn]] void fail(std::string_view column, std::string_view allowed) const;

 private:
  const CsvTable* table_;
  std::size_t index_;
};

class CsvTable {
 public:
  static CsvTable read_file(const std::filesystem::path& path);
  static CsvTable parse(std::string_view text, std::string source_name);

  const std::string& source() const { return source_; }
  const std::vector<std::string>& header() const { return header_; }
  std::size_t rows() const { return cells_.size(); }
  CsvRow row(std::size_t i) const { return CsvRow(*this, i); }
  bool has_column(std::string_view name) const { return column_index(name).has_value(); }
  std::optional<std::size_t> column_index(std::string_view name) const;
  // Throws naming the file when any of `columns` is not in the header.
  void require_columns(const std::vector<std::string>& columns) const;

 private:
  friend class CsvRow;
  std::string source_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> cells_;
  std::vector<std::size_t> lines_;
};

// Splits one CSV record with RFC 4180 quoting ("a,""b""" -> a,"b").
std::vector<std::string> split_csv_record(std::string_view line);
// Quotes a field when it needs it.
std::string csv_escape(std::string_view field);

}  // namespace kareus
