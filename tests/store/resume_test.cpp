// SPDX-License-Identifier: Apache-2.0
// A search killed with SIGKILL and run again ends exactly where an uninterrupted run ends, and
// never measures a stored configuration again.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kareus/store/store.hpp"

namespace kareus::store {
namespace {

namespace fs = std::filesystem;

struct HelperRun {
  fs::path db;
  fs::path log;
  fs::path out;
};

pid_t start_helper(const HelperRun& run, const std::string& strategy) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(KAREUS_RESUME_HELPER, KAREUS_RESUME_HELPER, run.db.c_str(), strategy.c_str(), "7", "4",
            run.log.c_str(), run.out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<std::string> lines(const fs::path& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

class ResumeTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kareus_resume_" + std::to_string(::getpid()) + "_" + GetParam());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  HelperRun files(const std::string& name, const std::string& db) const {
    return {dir_ / db, dir_ / (name + ".log"), dir_ / (name + ".json")};
  }
  fs::path dir_;
};

TEST_P(ResumeTest, KilledSearchResumesToTheSameFrontier) {
  const std::string strategy = GetParam();
  const HelperRun whole = files("whole", "whole.sqlite");
  ASSERT_EQ(wait_exit_code(start_helper(whole, strategy)), 0);
  const nlohmann::json expected = read_json(whole.out);
  const std::size_t total = expected.at("measurements");
  ASSERT_EQ(lines(whole.log).size(), total);

  // Kill the second run once its initial sample and at least part of a batch are stored.
  const HelperRun killed = files("killed", "resumed.sqlite");
  const pid_t pid = start_helper(killed, strategy);
  std::size_t stored_at_kill = 0;
  // Observe through one connection that only reads: opening a Store writes the schema, and
  // reopening it every few milliseconds starved the child of its write lock on a loaded machine.
  // Open it only once the child's store is in WAL mode (its -wal file exists): before that, the
  // observer's reads kept the child from switching to WAL ("database is locked", no busy wait),
  // and the child exited before it could be killed (seen once under the sanitizers).
  std::optional<Store> observer;
  const fs::path child_wal = killed.db.string() + "-wal";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!observer && fs::exists(child_wal)) observer.emplace(killed.db);
    if (observer) {
      stored_at_kill = observer->count();
      if (stored_at_kill > total / 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  observer.reset();
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the helper finished before it was killed";
  ASSERT_FALSE(fs::exists(killed.out));

  Store after_kill(killed.db);
  stored_at_kill = after_kill.count();
  ASSERT_GT(stored_at_kill, 0u);
  ASSERT_LT(stored_at_kill, total);

  const HelperRun resumed = files("resumed", "resumed.sqlite");
  ASSERT_EQ(wait_exit_code(start_helper(resumed, strategy)), 0);
  const nlohmann::json got = read_json(resumed.out);
  EXPECT_EQ(got.at("frontier_total"), expected.at("frontier_total"));
  EXPECT_EQ(got.at("frontier_dynamic"), expected.at("frontier_dynamic"));
  EXPECT_EQ(got.at("measurements"), expected.at("measurements"));
  EXPECT_EQ(got.at("stop_reason"), expected.at("stop_reason"));
  EXPECT_EQ(got.at("reused"), stored_at_kill);
  EXPECT_EQ(got.at("taken"), total - stored_at_kill);

  // The resumed run measured only configs the killed run had not stored, each once.
  const auto again = lines(resumed.log);
  EXPECT_EQ(again.size(), total - stored_at_kill);
  EXPECT_EQ(std::set<std::string>(again.begin(), again.end()).size(), again.size());
  const auto before = lines(killed.log);
  EXPECT_EQ(std::set<std::string>(before.begin(), before.end()).size(), before.size());
  EXPECT_EQ(Store(killed.db).count(), total);
}

INSTANTIATE_TEST_SUITE_P(Strategies, ResumeTest, ::testing::Values("paper", "kareus"));

}  // namespace
}  // namespace kareus::store
