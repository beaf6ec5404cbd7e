// SPDX-License-Identifier: Apache-2.0
#include "kareus/store/store.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <cmath>

#include <fstream>

#include <gtest/gtest.h>

#include "kareus/core/error.hpp"
#include "kareus/search/search.hpp"
#include "kareus/store/stored_problem.hpp"
#include "synthetic_problem.hpp"

namespace kareus::store {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kareus_store_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

const Scope kScope{"A100", "emulator", "llama3.2-3b/tp8", "fwd_attn"};

search::Measurement sample(double t) {
  return {Seconds(t), Joules(0.1 + t), Joules(0.1 + t - 85 * t), Seconds(100.0), false};
}

TEST_F(StoreTest, RoundTripIsExactAndScoped) {
  const fs::path db_path = dir_ / "nested" / "m.sqlite";
  {
    Store store(db_path);
    EXPECT_EQ(store.journal_mode(), "wal");
    store.put_batch(kScope, {{"a", sample(1.0 / 3.0)}, {"b", sample(2e-3)}});
    EXPECT_EQ(store.count(), 2u);
  }
  Store store(db_path);
  EXPECT_EQ(store.journal_mode(), "wal");
  const auto a = store.lookup(kScope, "a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->time.value(), 1.0 / 3.0);  // bit-exact, so a resumed search decides the same
  EXPECT_EQ(a->dynamic_energy.value(), sample(1.0 / 3.0).dynamic_energy.value());
  EXPECT_TRUE(a->reused);
  EXPECT_FALSE(store.lookup(kScope, "c").has_value());
  Scope other = kScope;
  other.partition_key = "fwd_mlp";
  EXPECT_FALSE(store.lookup(other, "a").has_value());
  EXPECT_EQ(store.count(kScope), 2u);
  EXPECT_EQ(store.count(other), 0u);
}

TEST_F(StoreTest, DefaultPathIsUnderTheCache) {
  const char* old = std::getenv("XDG_CACHE_HOME");
  ::setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(Store::default_path(), fs::path("/x/cache/kareus/measurements.sqlite"));
  if (old != nullptr) {
    ::setenv("XDG_CACHE_HOME", old, 1);
  } else {
    ::unsetenv("XDG_CACHE_HOME");
  }
}

// Paths that no user can write to, root included: under a regular file, and a folder itself.
TEST_F(StoreTest, UnwritablePathIsAClearError) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";
  try {
    Store store(dir_ / "file" / "m.sqlite");
    FAIL() << "opened a store under a regular file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create folder"), std::string::npos) << e.what();
  }
  try {
    Store store(dir_);
    FAIL() << "opened a folder as a store";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir_.string()), std::string::npos) << e.what();
  }
}

TEST_F(StoreTest, CorruptFileIsAClearError) {
  fs::create_directories(dir_);
  const fs::path db_path = dir_ / "m.sqlite";
  std::ofstream(db_path) << std::string(4096, 'x');
  try {
    Store store(db_path);
    FAIL() << "opened a corrupt store";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a usable Kareus measurement store"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(StoreTest, StoredProblemMeasuresOnlyWhatIsMissing) {
  testing::SyntheticProblem problem({1, 1, 1e-3, 24e6, 0.005, 2});
  Store store(dir_ / "m.sqlite");
  {
    StoredProblem stored(problem, store, kScope);
    const auto first = stored.measure({3, 5});
    EXPECT_EQ(stored.taken(), 2u);
    EXPECT_FALSE(first[0].reused);
    const auto second = stored.measure({5, 7, 3});
    EXPECT_EQ(stored.taken(), 3u);
    EXPECT_EQ(stored.reused(), 2u);
    EXPECT_TRUE(second[0].reused);
    EXPECT_FALSE(second[1].reused);
    EXPECT_EQ(second[2].time, first[0].time);
  }
  EXPECT_EQ(problem.measured_ids(), (std::vector<std::size_t>{3, 5, 7}));
  EXPECT_EQ(store.count(kScope), 3u);

  // A second search over the same scope reuses everything the first one measured.
  search::SearchOptions options;
  options.strategy = search::Strategy::kExhaustive;
  StoredProblem stored(problem, store, kScope);
  const auto result = search::run_search(stored, options);
  EXPECT_EQ(result.summary.measurements_reused, 3u);
  EXPECT_EQ(result.summary.measurements_taken, problem.size() - 3);
  EXPECT_EQ(problem.measured_ids().size(), problem.size());
}

TEST_F(StoreTest, RefusesNonFiniteOrNegativeMeasurementsOnWrite) {
  Store store(dir_ / "m.sqlite");
  auto bad_time = sample(1.0);
  bad_time.time = Seconds(std::nan(""));
  auto negative = sample(1.0);
  negative.total_energy = Joules(-1.0);
  for (const auto& m : {bad_time, negative}) {
    try {
      store.put_batch(kScope, {{"a", m}});
      ADD_FAILURE() << "stored a bad measurement";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("config a: refusing to store"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(store.count(), 0u);
}

TEST_F(StoreTest, RefusesGarbageReadBackNamingTheDatabase) {
  const fs::path db_path = dir_ / "m.sqlite";
  Store(db_path).put_batch(kScope, {{"a", sample(1.0)}, {"b", sample(2.0)}});
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE measurements SET time_s = 'abc' WHERE config_key = 'a';"
                         "UPDATE measurements SET total_energy_j = -5 WHERE config_key = 'b';",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  Store store(db_path);
  for (const auto& [key, field] :
       {std::pair{"a", "time_s is not a number"}, std::pair{"b", "total_energy_j = -5"}}) {
    try {
      store.lookup(kScope, key);
      ADD_FAILURE() << "read back a bad measurement";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kIo);
      EXPECT_NE(std::string(e.what()).find(db_path.string()), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace kareus::store
