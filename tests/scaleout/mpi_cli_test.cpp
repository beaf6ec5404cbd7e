// SPDX-License-Identifier: Apache-2.0
// `kareus plan` and `kareus search` under mpirun give what one process gives, keep what a killed
// job measured, and plan a sweep of workloads in one job.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/run_cli.hpp"
#include "common/scratch_dir.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"

namespace kareus {
namespace {

namespace fs = std::filesystem;

const testing::ScratchDir kScratch("kareus_scaleout_test");

// A folder per test, so that a store one test fills is never the one another test expects empty
// (the tests run in one process when gtest is filtered by hand, one per process under ctest).
fs::path tmp() {
  const fs::path dir =
      kScratch.path() / ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::create_directories(dir);
  return dir;
}

// OpenMPI refuses to start as root (CI containers) without both variables.
const bool kRootAllowed = [] {
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  return true;
}();

// The paper's first configuration with half the microbatches, as in plan_cli_test.
const std::string kWorkload =
    "--model llama3.2-3b --tp 8 --pp 2 --mbs 8 --seq 4096 --microbatches 4 --quiet --seed 7";

std::string plan_args(const std::string& name, const std::string& methods = "megatron,kareus") {
  return "plan " + kWorkload + " --methods " + methods + " --db " +
         (tmp() / (name + ".sqlite")).string() + " --out " + (tmp() / name).string();
}

testing::CliRun kareus(const std::string& args) {
  return testing::run_cli(KAREUS_BINARY, args);
}

// `env` prefixes the launcher as shell assignments (fault injection).
testing::CliRun mpirun(int ranks, const std::string& args, const std::string& env = "") {
  return testing::run_cli(
      env + " " + KAREUS_MPIEXEC,
      "--oversubscribe -n " + std::to_string(ranks) + " " + KAREUS_BINARY + " " + args);
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The solver's wall times (`*time_s` but its unit) differ run to run; its counts do not.
void drop_wall_times(Json& solver) {
  for (auto it = solver.begin(); it != solver.end();) {
    const bool wall = it.key().ends_with("time_s") && it.key() != "unit_time_s";
    it = wall ? solver.erase(it) : std::next(it);
  }
}

// GPU-hours count clock settles, and each rank settles its own GPU, so N ranks settle a few
// times more or less than one process; everything the search decides is compared exactly. A
// resumed run also differs in what it reused.
void drop_cost(Json& j, bool resumed) {
  if (j.is_object()) {
    for (const char* key : {"profiling_gpu_hours", "profiling_gpu_hours_reused", "gpu_hours",
                            "gpu_hours_reused", "db"})
      j.erase(key);
    if (j.contains("solver")) drop_wall_times(j["solver"]);
    if (resumed) j.erase("measurements_reused");
    for (auto& [key, value] : j.items()) drop_cost(value, resumed);
  } else if (j.is_array()) {
    for (auto& value : j) drop_cost(value, resumed);
  }
}

// Also without the store's path: the runs compared keep their measurements in separate stores.
std::string without_cost(const std::string& text, bool resumed = false) {
  Json j = Json::parse(text);
  drop_cost(j, resumed);
  if (j.contains("provenance")) j["provenance"].erase("store");
  return j.dump(1);
}

// The first differing line, so a failure prints a line rather than two whole documents.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream sa(a);
  std::istringstream sb(b);
  std::string la;
  std::string lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(sa, la));
    const bool more_b = static_cast<bool>(std::getline(sb, lb));
    if (!more_a && !more_b) return "";
    if (!more_a || !more_b || la != lb)
      return "line " + std::to_string(line) + ": '" + la + "' vs '" + lb + "'";
  }
}

// mpirun can return while the rank 0 it stopped is still committing; waits (up to a minute)
// until no process has the store open.
void wait_until_closed(const fs::path& store) {
  const fs::path target = fs::weakly_canonical(store);
  for (int tries = 0; tries < 600; ++tries) {
    bool open = false;
    std::error_code ec;
    for (const auto& proc : fs::directory_iterator("/proc", ec)) {
      for (const auto& fd : fs::directory_iterator(proc.path() / "fd", ec)) {
        if (fs::read_symlink(fd.path(), ec) == target) open = true;
      }
    }
    if (!open) return;
    ::usleep(100000);
  }
  ADD_FAILURE() << store << " is still open";
}

// Every stored measurement but its GPU cost, in key order.
std::vector<std::string> store_rows(const fs::path& path) {
  sqlite3* db = nullptr;
  // Read-write, so that the WAL of a killed writer is recovered; waiting, because a stopped
  // rank 0 may still be finishing its commit when the launcher returns.
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_busy_timeout(db, 20000);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(
                db,
                "SELECT gpu, executor, workload_shape, partition_key, config_key, time_s, "
                "total_energy_j, dynamic_energy_j FROM measurements ORDER BY 1, 2, 3, 4, 5",
                -1, &st, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  std::vector<std::string> rows;
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::string row;
    for (int c = 0; c < 5; ++c)
      row += std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, c))) + "|";
    for (int c = 5; c < 8; ++c) row += format_number(sqlite3_column_double(st, c)) + "|";
    rows.push_back(row);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return rows;
}

double total_gpu_hours(const fs::path& summary) {
  const Json j = Json::parse(read(summary));
  double sum = 0;
  for (const auto& [name, method] : j.at("methods").items())
    sum += method.at("profiling_gpu_hours").get<double>();
  return sum;
}

// Frontiers and schedule byte for byte; the summary but for GPU-hours.
void expect_same_outputs(const fs::path& reference, const fs::path& dir, bool resumed = false) {
  for (const auto& entry : fs::directory_iterator(reference)) {
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    ASSERT_TRUE(fs::exists(dir / name));
    std::string want = read(entry.path());
    std::string got = read(dir / name);
    if (name == "summary.json") {
      want = without_cost(want, resumed);
      got = without_cost(got, resumed);
    }
    EXPECT_TRUE(got == want) << first_difference(got, want);
  }
}

void expect_same_plan_as_one_rank(int ranks) {
  const auto one = kareus(plan_args("one"));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto many = mpirun(ranks, plan_args("many"));
  ASSERT_EQ(many.exit_code, 0) << many.err;
  expect_same_outputs(tmp() / "one", tmp() / "many");
  const auto rows = store_rows(tmp() / "one.sqlite");
  EXPECT_GT(rows.size(), 100u);
  EXPECT_EQ(store_rows(tmp() / "many.sqlite"), rows);
  const double single = total_gpu_hours(tmp() / "one" / "summary.json");
  const double spread = total_gpu_hours(tmp() / "many" / "summary.json");
  EXPECT_NEAR(spread, single, 0.01 * single) << "only clock settles may cost differently";
}

TEST(ScaleOutPlan, TwoRanksPlanExactlyWhatOneRankPlans) {
  expect_same_plan_as_one_rank(2);
}

TEST(ScaleOutPlan, ThreeRanksPlanExactlyWhatOneRankPlans) {
  expect_same_plan_as_one_rank(3);
}

TEST(ScaleOutSearch, ThreeRanksFindTheFrontiersOneRankFinds) {
  const std::string args =
      "search --model llama3.2-3b --tp 8 --mbs 8 --seq 4096 --strategy kareus --seed 3 --json "
      "--db ";
  const auto one = kareus(args + (tmp() / "one.sqlite").string());
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto three = mpirun(3, args + (tmp() / "three.sqlite").string());
  ASSERT_EQ(three.exit_code, 0) << three.err;
  EXPECT_TRUE(without_cost(three.out) == without_cost(one.out))
      << first_difference(without_cost(three.out), without_cost(one.out));
  EXPECT_EQ(store_rows(tmp() / "three.sqlite"), store_rows(tmp() / "one.sqlite"));
}

// Ranks 1 and 2 have nothing to measure when no method searches; they wait for the stop.
TEST(ScaleOutPlan, RanksWithNoWorkExitCleanly) {
  const auto one = kareus(plan_args("one", "megatron,perseus"));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto three = mpirun(3, plan_args("three", "megatron,perseus"));
  ASSERT_EQ(three.exit_code, 0) << three.err;
  const std::string dir = (tmp() / "three").string();
  std::string out = three.out;
  out.replace(out.find(dir), dir.size(), (tmp() / "one").string());
  EXPECT_EQ(out, one.out);
  expect_same_outputs(tmp() / "one", tmp() / "three");
}

TEST(ScaleOutPlan, BadInputOnTheCoordinatorStopsEveryRank) {
  const auto r = mpirun(2, plan_args("bad") + " --noise 7");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("--noise = 7"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp() / "bad"));
}

TEST(ScaleOutFaults, AKilledRankFailsTheJobNamingItAndARerunResumes) {
  const auto reference = kareus(plan_args("one"));
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  const std::size_t full = store_rows(tmp() / "one.sqlite").size();

  // Rank 1 dies by SIGKILL when its sixth piece of a batch arrives.
  const auto killed = mpirun(3, plan_args("resumed"), "KAREUS_TEST_KILL=1:5");
  EXPECT_NE(killed.exit_code, 0);
  EXPECT_NE(killed.err.find("rank 1"), std::string::npos) << killed.err;
  EXPECT_NE(killed.err.find("process rank 1"), std::string::npos) << killed.err;
  EXPECT_FALSE(fs::exists(tmp() / "resumed" / "summary.json"));
  wait_until_closed(tmp() / "resumed.sqlite");
  const std::size_t kept = store_rows(tmp() / "resumed.sqlite").size();
  // The batches before, and the pieces ranks 0 and 2 answered of the one rank 1 never did.
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, full);

  const auto rerun = mpirun(2, plan_args("resumed") + " --json");
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  const Json summary = Json::parse(rerun.out);
  EXPECT_EQ(summary.at("methods").at("kareus").at("measurements_reused").get<std::size_t>(), kept);
  expect_same_outputs(tmp() / "one", tmp() / "resumed", true);
  EXPECT_EQ(store_rows(tmp() / "resumed.sqlite"), store_rows(tmp() / "one.sqlite"));
}

// Exhaustive batches are 16 configurations in id order; with three ranks the third batch is cut
// 6/5/5. Rank 1 dies when that piece arrives: the first two batches were committed as in one
// process, and of the third, rank 0's own piece (and rank 2's, unless the launcher stopped it
// first) is committed before rank 0 exits.
TEST(ScaleOutFaults, TheCoordinatorCommitsThePiecesOfTheBatchItWasWaitingFor) {
  const std::string args =
      "search --model llama3.2-3b --tp 8 --mbs 8 --seq 4096 --strategy exhaustive --partition "
      "fwd_attn --json --db " +
      (tmp() / "salvaged.sqlite").string();
  const auto killed = mpirun(3, args, "KAREUS_TEST_KILL=1:2");
  EXPECT_NE(killed.exit_code, 0);
  EXPECT_NE(killed.err.find("from rank(s) 1"), std::string::npos) << killed.err;
  wait_until_closed(tmp() / "salvaged.sqlite");
  const std::size_t kept = store_rows(tmp() / "salvaged.sqlite").size();
  EXPECT_GE(kept, 2u * 16u + 6u);
  EXPECT_LE(kept, 2u * 16u + 6u + 5u);
  EXPECT_NE(
      killed.err.find(std::to_string(kept - 32) + " measurements of this batch are committed"),
      std::string::npos)
      << killed.err;

  const auto rerun = mpirun(2, args);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  EXPECT_EQ(Json::parse(rerun.out).at("measurements").at("reused").get<std::size_t>(), kept);
  const auto one = kareus(
      "search --model llama3.2-3b --tp 8 --mbs 8 --seq 4096 --strategy exhaustive --partition "
      "fwd_attn --json --db " +
      (tmp() / "one.sqlite").string());
  ASSERT_EQ(one.exit_code, 0) << one.err;
  // Reused readings come back marked so; the values, frontiers and decisions are the same.
  Json resumed = Json::parse(rerun.out);
  Json reference = Json::parse(one.out);
  for (Json* j : {&resumed, &reference}) {
    drop_cost(*j, true);
    j->erase("measurements");
    for (auto& part : j->at("partitions")) {
      part.erase("measurements");
      for (const char* f : {"frontier", "frontier_dynamic"})
        for (auto& point : part.at(f)) point.erase("reused");
    }
  }
  EXPECT_EQ(resumed.dump(1), reference.dump(1));
  EXPECT_EQ(store_rows(tmp() / "salvaged.sqlite"), store_rows(tmp() / "one.sqlite"));
}

void write_workload(const fs::path& path, const std::string& model) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << Json{
      {"model", model},
      {"gpu", "a100-sxm4-40gb"},
      {"parallelism",
       {{"tp", 8},
        {"pp", 2},
        {"microbatch_size", 8},
        {"sequence_length", 4096},
        {"microbatches", 4},
        {"recompute",
         "full"}}}}.dump(2);
}

TEST(ScaleOutSweep, OneJobPlansEveryWorkloadOfAFolderAsSeparateRunsWould) {
  write_workload(tmp() / "sweep" / "a_llama.json", "llama3.2-3b");
  write_workload(tmp() / "sweep" / "b_qwen.json", "qwen3-1.7b");
  const std::string common = "plan --quiet --seed 7 --methods megatron,kareus";
  for (const char* name : {"a_llama", "b_qwen"}) {
    const auto one = kareus(
        common + " --workload " + (tmp() / "sweep" / (std::string(name) + ".json")).string() +
        " --db " + (tmp() / "one.sqlite").string() + " --out " + (tmp() / "ref" / name).string());
    ASSERT_EQ(one.exit_code, 0) << one.err;
  }
  const auto sweep =
      mpirun(2, common + " --workload " + (tmp() / "sweep").string() + " --db " +
                    (tmp() / "sweep.sqlite").string() + " --out " + (tmp() / "out").string());
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  for (const char* name : {"a_llama", "b_qwen"}) {
    SCOPED_TRACE(name);
    expect_same_outputs(tmp() / "ref" / name, tmp() / "out" / name);
  }
  EXPECT_EQ(store_rows(tmp() / "sweep.sqlite"), store_rows(tmp() / "one.sqlite"));
}

}  // namespace
}  // namespace kareus
