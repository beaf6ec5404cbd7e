// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/csv.hpp"

#include <fmt/format.h>

#include <cmath>
#include <unordered_set>

#include "kareus/core/decimal.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/text_file.hpp"

namespace kareus {
namespace {

std::string trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

std::vector<std::string> split_csv_record(std::string_view line) {
  std::vector<std::string> fields;
  std::string current;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        current += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        current += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(trim(current));
      current.clear();
    } else {
      current += c;
    }
  }
  fields.push_back(trim(current));
  return fields;
}

std::string csv_escape(std::string_view field) {
  if (field.find_first_of(",\"\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

CsvTable CsvTable::read_file(const std::filesystem::path& path) {
  return parse(read_text_file(path), path.string());
}

CsvTable CsvTable::parse(std::string_view text, std::string source_name) {
  CsvTable table;
  table.source_ = std::move(source_name);
  std::size_t line_no = 0;
  std::size_t pos = 0;
  bool have_header = false;
  while (pos <= text.size()) {
    // A quoted field may span lines: extend the record until the quotes balance.
    std::size_t end = pos;
    bool in_quotes = false;
    while (end < text.size() && (in_quotes || text[end] != '\n')) {
      if (text[end] == '"') in_quotes = !in_quotes;
      ++end;
    }
    const std::string_view record = text.substr(pos, end - pos);
    const std::size_t first_line = line_no + 1;
    for (char c : record) line_no += (c == '\n');
    ++line_no;
    pos = end + 1;
    if (trim(record).empty()) {
      if (end >= text.size()) break;
      continue;
    }
    auto fields = split_csv_record(record);
    if (!have_header) {
      // A repeated column would be read from its first copy only, the second silently ignored.
      std::unordered_set<std::string_view> names;
      for (const std::string& name : fields)
        if (!names.insert(name).second)
          throw Error(
              fmt::format("{}:{}: column '{}' appears twice in the header: name each "
                          "column once",
                          table.source_, first_line, name));
      table.header_ = std::move(fields);
      have_header = true;
      continue;
    }
    if (fields.size() != table.header_.size()) {
      throw Error(fmt::format("{}:{}: expected {} fields as in the header, found {}", table.source_,
                              first_line, table.header_.size(), fields.size()));
    }
    table.cells_.push_back(std::move(fields));
    table.lines_.push_back(first_line);
    if (end >= text.size()) break;
  }
  if (!have_header)
    throw Error(fmt::format("{}: empty file, expected a CSV header", table.source_));
  return table;
}

std::optional<std::size_t> CsvTable::column_index(std::string_view name) const {
  for (std::size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == name) return i;
  return std::nullopt;
}

void CsvTable::require_columns(const std::vector<std::string>& columns) const {
  for (const auto& c : columns) {
    if (!has_column(c)) {
      std::string have;
      for (const auto& h : header_) have += (have.empty() ? "" : ",") + h;
      throw Error(
          fmt::format("{}: missing required column '{}' (header has: {})", source_, c, have));
    }
  }
}

std::size_t CsvRow::line() const {
  return table_->lines_[index_];
}

bool CsvRow::has(std::string_view column) const {
  return table_->has_column(column);
}

void CsvRow::fail(std::string_view column, std::string_view allowed) const {
  const auto idx = table_->column_index(column);
  const std::string value = idx ? table_->cells_[index_][*idx] : std::string();
  throw Error::invalid(fmt::format("{}:{}", table_->source_, line()),
                       fmt::format("column '{}'", column), value, allowed);
}

const std::string& CsvRow::text(std::string_view column) const {
  const auto idx = table_->column_index(column);
  if (!idx) throw Error(fmt::format("{}: missing required column '{}'", table_->source_, column));
  return table_->cells_[index_][*idx];
}

std::optional<std::string> CsvRow::optional_text(std::string_view column) const {
  const auto idx = table_->column_index(column);
  if (!idx || table_->cells_[index_][*idx].empty()) return std::nullopt;
  return table_->cells_[index_][*idx];
}

std::optional<double> CsvRow::optional_number(std::string_view column) const {
  const auto cell = optional_text(column);
  if (!cell) return std::nullopt;
  const auto v = parse_decimal(*cell);
  if (!v) fail(column, "expected a finite number in decimal, such as 1.5 or 2e-3");
  return *v;
}

double CsvRow::number(std::string_view column) const {
  const auto v = optional_number(column);
  if (!v) fail(column, "a value is required");
  return *v;
}

double CsvRow::positive_number(std::string_view column) const {
  const double v = number(column);
  if (!(v > 0.0)) fail(column, "expected a positive number");
  return v;
}

double CsvRow::non_negative_number(std::string_view column) const {
  const double v = number(column);
  if (v < 0.0) fail(column, "expected a number >= 0");
  return v;
}

long CsvRow::integer(std::string_view column) const {
  const double v = number(column);
  if (v != std::floor(v) || std::fabs(v) > 1e15) fail(column, "expected an integer");
  return static_cast<long>(v);
}

long CsvRow::positive_integer(std::string_view column) const {
  const long v = integer(column);
  if (v <= 0) fail(column, "expected a positive integer");
  return v;
}

}  // namespace kareus
