// SPDX-License-Identifier: Apache-2.0
// The measurement store: every measurement a search takes goes into one SQLite database, keyed by
// GPU type, executor, workload shape, partition key and configuration, so that a killed search
// resumes without measuring anything twice and later runs reuse what earlier runs measured.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/search/problem.hpp"

struct sqlite3;

namespace kareus::store {

// Which partition a measurement belongs to; every field is part of the key.
struct Scope {
  std::string gpu;       // e.g. "A100-SXM4-40GB"
  std::string executor;  // e.g. "emulator" or "cuda"
  std::string
      workload_shape;  // shape of the partition's workload, e.g. "llama3.2-3b/tp8/mbs8/seq4096"
  std::string partition_key;  // e.g. "fwd_attn"
};

struct Record {
  std::string config_key;
  search::Measurement measurement;
};

class Store {
 public:
  // Current layout of the database; a file with another version is refused.
  static constexpr int kSchemaVersion = 1;

  // $XDG_CACHE_HOME/kareus/measurements.sqlite, or ~/.cache/kareus/measurements.sqlite.
  static std::filesystem::path default_path();

  // Opens (creating the folders, file and schema when missing) in WAL mode.
  explicit Store(const std::filesystem::path& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // The measurement of `config_key` in `scope`, marked reused; nullopt when not stored.
  std::optional<search::Measurement> lookup(const Scope& scope, std::string_view config_key) const;
  // Writes all records in one transaction: after a crash either all are stored or none.
  void put_batch(const Scope& scope, const std::vector<Record>& records);
  std::size_t count() const;
  std::size_t count(const Scope& scope) const;
  // SQLite's journal mode ("wal").
  std::string journal_mode() const;

 private:
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

}  // namespace kareus::store
