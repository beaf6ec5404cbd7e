// SPDX-License-Identifier: Apache-2.0
#include "kareus/store/store.hpp"

#include <sqlite3.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "kareus/core/error.hpp"
#include "sqlite_statement.hpp"

namespace kareus::store {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS measurements (
  gpu              TEXT NOT NULL,
  executor         TEXT NOT NULL,
  workload_shape   TEXT NOT NULL,
  partition_key    TEXT NOT NULL,
  config_key       TEXT NOT NULL,
  time_s           REAL NOT NULL,
  total_energy_j   REAL NOT NULL,
  dynamic_energy_j REAL NOT NULL,
  gpu_cost_s       REAL NOT NULL,
  measured_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  PRIMARY KEY (gpu, executor, workload_shape, partition_key, config_key)
) WITHOUT ROWID;
)sql";

// A measurement a plan may rest on: a positive finite time, a finite non-negative total energy and
// cost. Dynamic energy is total minus static power x time, so noise may push it slightly below 0;
// it need only be finite.
std::optional<std::string> measurement_problem(double time, double total, double dynamic,
                                               double cost) {
  if (!(std::isfinite(time) && time > 0)) return fmt::format("time_s = {}: expected > 0", time);
  if (!(std::isfinite(total) && total >= 0))
    return fmt::format("total_energy_j = {}: expected >= 0", total);
  if (!std::isfinite(dynamic))
    return fmt::format("dynamic_energy_j = {}: expected finite", dynamic);
  if (!(std::isfinite(cost) && cost >= 0))
    return fmt::format("gpu_cost_s = {}: expected >= 0", cost);
  return std::nullopt;
}

}  // namespace

std::filesystem::path Store::default_path() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::filesystem::path(xdg) / "kareus" / "measurements.sqlite";
  }
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') {
    throw Error(
        fmt::format("measurement store: neither XDG_CACHE_HOME nor HOME is set; pass {} PATH",
                    field_ref("store_path")));
  }
  return std::filesystem::path(home) / ".cache" / "kareus" / "measurements.sqlite";
}

Store::Store(const std::filesystem::path& path) : path_(path) {
  if (path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      throw Error::io(fmt::format("measurement store {}: cannot create folder {}: {}",
                                  path.string(), path.parent_path().string(), ec.message()));
    }
  }
  const int rc =
      sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    const std::string why = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    throw Error::io(fmt::format("measurement store {}: cannot open: {}", path.string(), why));
  }
  try {
    // Concurrent readers (another search, a progress view) wait instead of failing at once.
    sqlite3_busy_timeout(db_, 10000);
    const int version = Statement(db_, path_, "PRAGMA user_version").step_int();
    if (version != 0 && version != kSchemaVersion) {
      throw Error::io(
          fmt::format("measurement store {}: schema version {} is not supported (this Kareus reads "
                      "version {}); "
                      "use another {}",
                      path.string(), version, kSchemaVersion, field_ref("store_path")));
    }
    if (Statement(db_, path_, "PRAGMA journal_mode=WAL").step_text() != "wal") {
      throw Error::io(fmt::format("measurement store {}: SQLite refused WAL mode", path.string()));
    }
    // With the default FULL every commit waits for an fsync, so a first plan ran measurably
    // slower with the store on a disk than in memory (Qwen3-1.7B on H100: 1.30 s vs 0.94 s);
    // with NORMAL the two match. In WAL mode NORMAL still never corrupts the file: a power loss
    // may drop the last commits, and those measurements are simply taken again by the next run.
    execute(db_, path_, "PRAGMA synchronous=NORMAL");
    if (version == 0) {
      execute(db_, path_, kSchema);
      execute(db_, path_, fmt::format("PRAGMA user_version = {}", kSchemaVersion));
    }
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

Store::~Store() {
  sqlite3_close(db_);
}

std::optional<search::Measurement> Store::lookup(const Scope& scope,
                                                 std::string_view config_key) const {
  Statement q(db_, path_,
              "SELECT time_s, total_energy_j, dynamic_energy_j, gpu_cost_s FROM measurements "
              "WHERE gpu = ?1 AND executor = ?2 AND workload_shape = ?3 AND partition_key = ?4 "
              "AND config_key = ?5");
  q.bind_scope(scope);
  q.bind(5, config_key);
  if (!q.step()) return std::nullopt;
  constexpr const char* kColumns[] = {"time_s", "total_energy_j", "dynamic_energy_j", "gpu_cost_s"};
  for (int c = 0; c < 4; ++c) {
    if (!q.column_is_number(c))
      throw Error::io(fmt::format(
          "measurement store {}: config {}: column {} is not a number; the store was edited "
          "or damaged (delete the row or the file)",
          path_.string(), config_key, kColumns[c]));
  }
  const search::Measurement m{Seconds(q.column_double(0)), Joules(q.column_double(1)),
                              Joules(q.column_double(2)), Seconds(q.column_double(3)), true};
  if (const auto problem = measurement_problem(m.time.value(), m.total_energy.value(),
                                               m.dynamic_energy.value(), m.gpu_cost.value()))
    throw Error::io(fmt::format(
        "measurement store {}: config {}: {}; the store was edited or damaged (delete the row "
        "or the file)",
        path_.string(), config_key, *problem));
  return m;
}

void Store::put_batch(const Scope& scope, const std::vector<Record>& records) {
  if (records.empty()) return;
  Transaction transaction(db_, path_);
  Statement insert(db_, path_,
                   "INSERT OR REPLACE INTO measurements (gpu, executor, workload_shape, "
                   "partition_key, config_key, time_s, total_energy_j, dynamic_energy_j, "
                   "gpu_cost_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  for (const Record& r : records) {
    const auto& m = r.measurement;
    if (const auto problem = measurement_problem(m.time.value(), m.total_energy.value(),
                                                 m.dynamic_energy.value(), m.gpu_cost.value()))
      throw Error(fmt::format("measurement store {}: config {}: refusing to store {}",
                              path_.string(), r.config_key, *problem));
    insert.reset();
    insert.bind_scope(scope);
    insert.bind(5, r.config_key);
    insert.bind(6, r.measurement.time.value());
    insert.bind(7, r.measurement.total_energy.value());
    insert.bind(8, r.measurement.dynamic_energy.value());
    insert.bind(9, r.measurement.gpu_cost.value());
    insert.step();
  }
  transaction.commit();
}

std::size_t Store::count() const {
  return static_cast<std::size_t>(
      Statement(db_, path_, "SELECT COUNT(*) FROM measurements").step_int());
}

std::size_t Store::count(const Scope& scope) const {
  Statement q(db_, path_,
              "SELECT COUNT(*) FROM measurements WHERE gpu = ?1 AND executor = ?2 AND "
              "workload_shape = ?3 AND partition_key = ?4");
  q.bind_scope(scope);
  return static_cast<std::size_t>(q.step_int());
}

std::string Store::journal_mode() const {
  return Statement(db_, path_, "PRAGMA journal_mode").step_text();
}

}  // namespace kareus::store
