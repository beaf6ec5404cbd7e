// SPDX-License-Identifier: Apache-2.0
// OutputDir: a folder of outputs appears whole or not at all, a rerun replaces the previous set
// but keeps what is not its own, and output paths are refused before any work.
#include "kareus/core/output_set.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"

namespace kareus {
namespace {
namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d =
      fs::temp_directory_path() / fmt::format("kareus-output-set-{}-{}", getpid(), name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void put(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::set<std::string> names(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

bool owns_plan_files(std::string_view name) {
  return name == "schedule.json" || name.starts_with("frontier_");
}

TEST(OutputDir, NewTargetAppearsWithExactlyTheSet) {
  const fs::path root = fresh_dir("new");
  {
    OutputDir out(root / "plan");
    put(out.staging() / "schedule.json", "new");
    put(out.staging() / "summary.json", "new");
    EXPECT_FALSE(fs::exists(root / "plan")) << "nothing visible before commit";
    out.commit();
  }
  EXPECT_EQ(names(root), std::set<std::string>{"plan"}) << "no staging folder left beside it";
  EXPECT_EQ(names(root / "plan"), (std::set<std::string>{"schedule.json", "summary.json"}));
  fs::remove_all(root);
}

TEST(OutputDir, AnUncommittedSetLeavesTheTargetAsItWas) {
  const fs::path root = fresh_dir("uncommitted");
  fs::create_directories(root / "plan");
  put(root / "plan" / "schedule.json", "old");
  put(root / "plan" / "summary.json", "old");
  try {
    OutputDir out(root / "plan");
    put(out.staging() / "schedule.json", "new");
    throw Error("the second file failed");
  } catch (const Error&) {
  }
  EXPECT_EQ(names(root), std::set<std::string>{"plan"});
  EXPECT_EQ(read(root / "plan" / "schedule.json"), "old");
  EXPECT_EQ(read(root / "plan" / "summary.json"), "old");
  fs::remove_all(root);
}

TEST(OutputDir, ARerunReplacesThePreviousSetAndKeepsOtherFiles) {
  const fs::path root = fresh_dir("rerun");
  const fs::path plan = root / "plan";
  fs::create_directories(plan / "notes");
  put(plan / "schedule.json", "old");
  put(plan / "frontier_perseus.csv", "old");  // a method the rerun does not plan
  put(plan / "report.html", "mine");
  put(plan / "notes" / "a.txt", "mine");
  {
    OutputDir out(plan, owns_plan_files);
    put(out.staging() / "schedule.json", "new");
    put(out.staging() / "frontier_kareus.csv", "new");
    out.commit();
  }
  EXPECT_EQ(names(root), std::set<std::string>{"plan"});
  EXPECT_EQ(names(plan), (std::set<std::string>{"schedule.json", "frontier_kareus.csv",
                                                "report.html", "notes"}));
  EXPECT_EQ(read(plan / "schedule.json"), "new");
  EXPECT_EQ(read(plan / "report.html"), "mine");
  EXPECT_EQ(read(plan / "notes" / "a.txt"), "mine");
  fs::remove_all(root);
}

TEST(OutputDir, AWorkingFolderTargetGetsEachFileInPlace) {
  const fs::path root = fresh_dir("cwd");
  put(root / "schedule.json", "old");
  put(root / "frontier_perseus.csv", "old");
  put(root / "mine.txt", "mine");
  const fs::path before = fs::current_path();
  fs::current_path(root);
  {
    OutputDir out(".", owns_plan_files);
    put(out.staging() / "schedule.json", "new");
    out.commit();
  }
  fs::current_path(before);
  EXPECT_EQ(names(root), (std::set<std::string>{"schedule.json", "mine.txt"}));
  EXPECT_EQ(read(root / "schedule.json"), "new");
  fs::remove_all(root);
}

TEST(OutputPaths, APathUnderAFileIsRefusedNamingTheFlag) {
  const fs::path root = fresh_dir("under-file");
  put(root / "f", "x");
  try {
    check_output_dir(root / "f" / "out", "command line", "--out");
    FAIL() << "accepted a folder under a file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("--out = " + (root / "f" / "out").string()),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(check_output_file(root / "f" / "x.csv", "command line", "--out"), Error);
  EXPECT_NO_THROW(check_output_dir(root / "new" / "deeper", "command line", "--out"));
  EXPECT_NO_THROW(check_output_file(root / "x.csv", "command line", "--out"));
  fs::remove_all(root);
}

TEST(OutputPaths, AFolderGivenAsAFileIsRefused) {
  const fs::path root = fresh_dir("folder-as-file");
  EXPECT_THROW(check_output_file(root, "command line", "OUT"), Error);
  fs::remove_all(root);
}

TEST(WriteFileAtomically, AFailedRenameLeavesNoTemporaryFile) {
  const fs::path root = fresh_dir("atomic");
  fs::create_directories(root / "out.csv" / "inside");  // a non-empty folder cannot be replaced
  try {
    write_file_atomically(root / "out.csv", "data");
    FAIL() << "wrote over a folder";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find("out.csv"), std::string::npos) << e.what();
  }
  EXPECT_EQ(names(root), std::set<std::string>{"out.csv"});
  fs::remove_all(root);
}

}  // namespace
}  // namespace kareus
