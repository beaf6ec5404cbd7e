// SPDX-License-Identifier: Apache-2.0
// Thin RAII helpers over the SQLite C API for the store: every failing call becomes a
// kareus::Error naming the database file and SQLite's reason.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "kareus/store/store.hpp"

namespace kareus::store {

[[noreturn]] void fail(sqlite3* db, const std::filesystem::path& path, std::string_view doing);
void execute(sqlite3* db, const std::filesystem::path& path, const std::string& sql);

class Statement {
 public:
  Statement(sqlite3* db, const std::filesystem::path& path, std::string_view sql);
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int index, std::string_view text);
  void bind(int index, double value);
  // Binds the four scope fields to parameters 1..4.
  void bind_scope(const Scope& scope);
  // True when a row is available, false when done.
  bool step();
  void reset();
  // Steps once and returns the first column of the row, failing if there is none.
  long long step_int();
  std::string step_text();
  double column_double(int column) const { return sqlite3_column_double(stmt_, column); }
  // True when the column holds a number; SQLite would read the text 'abc' as 0.0.
  bool column_is_number(int column) const {
    const int type = sqlite3_column_type(stmt_, column);
    return type == SQLITE_FLOAT || type == SQLITE_INTEGER;
  }

 private:
  sqlite3* db_;
  const std::filesystem::path& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back when destroyed uncommitted.
class Transaction {
 public:
  Transaction(sqlite3* db, const std::filesystem::path& path);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  sqlite3* db_;
  const std::filesystem::path& path_;
  bool done_ = false;
};

}  // namespace kareus::store
