// SPDX-License-Identifier: Apache-2.0
#include "sqlite_statement.hpp"

#include <fmt/format.h>

#include "kareus/core/error.hpp"

namespace kareus::store {

void fail(sqlite3* db, const std::filesystem::path& path, std::string_view doing) {
  const int code = sqlite3_errcode(db);
  std::string hint;
  if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
    hint = fmt::format(
        " (the file is not a usable Kareus measurement store; move it away or pass another {})",
        field_ref("store_path"));
  } else if (code == SQLITE_READONLY || code == SQLITE_CANTOPEN || code == SQLITE_PERM) {
    hint = fmt::format(" (the file or its folder is not writable; pass a writable {})",
                       field_ref("store_path"));
  }
  throw Error::io(fmt::format("measurement store {}: {} failed: {}{}", path.string(), doing,
                              sqlite3_errmsg(db), hint));
}

void execute(sqlite3* db, const std::filesystem::path& path, const std::string& sql) {
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    fail(db, path, sql.substr(0, sql.find_first_of("(\n", 1)));
  }
}

Statement::Statement(sqlite3* db, const std::filesystem::path& path, std::string_view sql)
    : db_(db), path_(path) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
      SQLITE_OK) {
    fail(db, path, fmt::format("preparing '{}'", sql));
  }
}

void Statement::bind(int index, std::string_view text) {
  if (sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK) {
    fail(db_, path_, "binding a text value");
  }
}

void Statement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) fail(db_, path_, "binding a number");
}

void Statement::bind_scope(const Scope& scope) {
  bind(1, scope.gpu);
  bind(2, scope.executor);
  bind(3, scope.workload_shape);
  bind(4, scope.partition_key);
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, path_, fmt::format("running '{}'", sqlite3_sql(stmt_)));
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

long long Statement::step_int() {
  if (!step()) fail(db_, path_, fmt::format("reading a row of '{}'", sqlite3_sql(stmt_)));
  return sqlite3_column_int64(stmt_, 0);
}

std::string Statement::step_text() {
  if (!step()) fail(db_, path_, fmt::format("reading a row of '{}'", sqlite3_sql(stmt_)));
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, 0));
  return text != nullptr ? text : "";
}

Transaction::Transaction(sqlite3* db, const std::filesystem::path& path) : db_(db), path_(path) {
  execute(db, path, "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  execute(db_, path_, "COMMIT");
  done_ = true;
}

}  // namespace kareus::store
