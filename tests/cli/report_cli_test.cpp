// SPDX-License-Identifier: Apache-2.0
// kareus report end to end: a plan's page opened in headless Chromium must render every chart
// with one mark per data point and log nothing; bad plan directories are refused with one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include "common/run_cli.hpp"
#include "common/scratch_dir.hpp"
#include "kareus/core/json.hpp"
#include "kareus/schedule/schedule.hpp"

namespace kareus {
namespace {

namespace fs = std::filesystem;

const testing::ScratchDir kScratch("kareus_report_cli");
const fs::path& kTmp = kScratch.path();
// Kept after the test for a person to look at.
const fs::path kShots = fs::path(KAREUS_TEST_BINARY_DIR) / "report-test";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

testing::CliRun kareus(const std::string& args) {
  fs::create_directories(kTmp);
  return testing::run_cli(KAREUS_BINARY, args);
}

// The paper's first configuration with half the microbatches, as in plan_cli_test.
std::string plan_args(const std::string& extra) {
  return "plan --model llama3.2-3b --tp 8 --pp 2 --mbs 8 --seq 4096 --microbatches 4 --quiet "
         "--db " +
         (kTmp / "store.sqlite").string() + " " + extra;
}

// Headless Chromium on a file; stdout and stderr of the browser.
testing::CliRun chromium(const fs::path& page, const std::string& mode) {
  EXPECT_TRUE(fs::exists(KAREUS_CHROMIUM))
      << "chromium not found at configure time; scripts/setup.sh installs it";
  const auto profile = kTmp / ("chromium-profile-" + mode.substr(2, 6));
  return testing::run_cli(
      KAREUS_CHROMIUM,
      "--headless --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 "
      "--user-data-dir=" +
          profile.string() + " --virtual-time-budget=30000 --window-size=1280,3200 " + mode +
          " file://" + page.string());
}

// Elements Vega drew for a named Vega-Lite mark: the <path>s (<line>s for rules) inside each
// group of that mark.
std::size_t drawn(const std::string& dom, const std::string& mark,
                  const std::string& element = "<path") {
  const std::string open = "role-mark " + mark + "_marks\"";
  std::size_t n = 0;
  for (auto at = dom.find(open); at != std::string::npos; at = dom.find(open, at + 1)) {
    const auto end = dom.find("</g>", at);
    const std::string group = dom.substr(at, end - at);
    for (auto p = group.find(element); p != std::string::npos; p = group.find(element, p + 1)) ++n;
  }
  return n;
}

std::size_t csv_rows(const fs::path& csv) {
  const auto text = read(csv);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) - 1;
}

class ReportCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // A deadline inside the kareus frontier, so that the page draws the bound too.
    const auto probe = kareus(plan_args("--methods kareus --json"));
    ASSERT_EQ(probe.exit_code, 0) << probe.err;
    const auto doc = JsonDocument::parse(probe.out, "stdout");
    const auto k = doc.root().at("methods").at("kareus");
    deadline_ = (k.at("max_throughput").number("time_s") + k.at("min_energy").number("time_s")) / 2;
    const auto r = kareus(plan_args("--deadline " + std::to_string(deadline_) + " --out " +
                                    plan_dir().string() + " --report " + page().string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_NE(r.out.find("wrote report " + page().string()), std::string::npos) << r.out;
  }
  static fs::path plan_dir() { return kTmp / "plan"; }
  static fs::path page() { return kTmp / "plan" / "report.html"; }
  static inline double deadline_ = 0;
};

TEST_F(ReportCli, EveryChartRendersOneMarkPerPointInChromiumWithoutConsoleOutput) {
  const auto r = chromium(page(), "--dump-dom");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& dom = r.out;
  EXPECT_NE(dom.find("data-status=\"rendered\""), std::string::npos)
      << "the page never finished rendering its charts";
  EXPECT_NE(dom.find("data-errors=\"[]\""), std::string::npos)
      << std::regex_replace(dom.substr(dom.find("data-errors"), 400), std::regex("&quot;"), "\"");
  EXPECT_NE(dom.find("data-warnings=\"[]\""), std::string::npos);
  EXPECT_EQ(r.err.find(":CONSOLE"), std::string::npos) << "the page logged:\n" << r.err;

  std::size_t frontier_points = 0;
  for (const auto& e : fs::directory_iterator(plan_dir()))
    if (e.path().filename().string().starts_with("frontier_"))
      frontier_points += csv_rows(e.path());
  EXPECT_GT(frontier_points, 100u);
  EXPECT_EQ(drawn(dom, "frontier_points"), frontier_points);
  EXPECT_EQ(drawn(dom, "selected_point"), 1u);
  EXPECT_EQ(drawn(dom, "selection_bound", "<line"), 1u) << "the deadline " << deadline_ << " s";

  const auto schedule = load_schedule(plan_dir() / "schedule.json");
  std::size_t instructions = 0;
  for (const auto& s : schedule.stages) instructions += s.instructions.size();
  EXPECT_EQ(drawn(dom, "timeline_bars"), instructions);
  EXPECT_EQ(instructions, 16u);  // 2 stages x 4 microbatches x (forward, backward)

  const auto partitions = JsonDocument::load_file(plan_dir() / "partitions.json");
  std::size_t measured = 0;
  const auto keys = partitions.root().at("keys");
  for (const auto& k : keys.keys()) measured += keys.at(k).size();
  EXPECT_GT(measured, 0u);
  EXPECT_EQ(drawn(dom, "partition_points"), measured);
}

TEST_F(ReportCli, TimelineReRunAgreesWithThePlan) {
  const auto html = read(page());
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      html, m, std::regex(R"(= ([0-9.]+) s per iteration; the plan predicted ([0-9.]+) s)")))
      << "timeline note missing";
  const double emulated = std::stod(m[1]), predicted = std::stod(m[2]);
  EXPECT_NEAR(emulated, predicted, 0.01 * predicted);
}

TEST_F(ReportCli, ScreenshotIsSavedUnderBuild) {
  fs::create_directories(kShots);
  const auto shot = kShots / "report.png";
  fs::remove(shot);
  const auto r = chromium(page(), "--screenshot=" + shot.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(shot));
  const auto png = read(shot);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  EXPECT_GT(png.size(), 50'000u) << "a blank page compresses to a few kilobytes";
  fs::copy_file(page(), kShots / "report.html", fs::copy_options::overwrite_existing);
}

TEST_F(ReportCli, ReportCommandRebuildsThePageAndWorksOffline) {
  const auto out = kTmp / "again.html";
  const auto r = kareus("report --plan " + plan_dir().string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto html = read(out);
  // Self-contained: no script or stylesheet is loaded from anywhere.
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(html.find("vega-embed"), std::string::npos);
  EXPECT_EQ(html, read(page())) << "the same plan gives the same page";
}

// Megatron selected (the last method listed): its timeline runs under the governor, and there is
// no partition to plot.
TEST_F(ReportCli, PlanReportWithoutOutWritesOnlyThePageAndItRendersCleanly) {
  const auto out = kTmp / "only.html";
  const auto r = kareus(plan_args("--methods perseus,megatron --report " + out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(out));
  const auto dom = chromium(out, "--dump-dom").out;
  EXPECT_NE(dom.find("data-status=\"rendered\""), std::string::npos);
  EXPECT_NE(dom.find("data-warnings=\"[]\""), std::string::npos);
  EXPECT_EQ(drawn(dom, "timeline_bars"), 16u);
  EXPECT_EQ(drawn(dom, "partition_points"), 0u);
}

TEST_F(ReportCli, IncompletePlanDirectoryIsRefusedWithoutWritingThePage) {
  auto broken = [&](const std::string& name, auto&& damage) {
    const auto dir = kTmp / ("broken_" + name);
    fs::remove_all(dir);
    fs::copy(plan_dir(), dir);
    fs::remove(dir / "report.html");
    damage(dir);
    return dir;
  };
  const auto html = kTmp / "bad.html";
  struct Case {
    fs::path dir;
    std::string message;
  };
  const std::vector<Case> cases = {
      {kTmp / "no_such_dir", "no_such_dir: not a directory"},
      {broken("summary", [](auto d) { fs::remove(d / "summary.json"); }),
       "summary.json: not found"},
      {broken("schedule", [](auto d) { fs::remove(d / "schedule.json"); }),
       "schedule.json: not found"},
      {broken("partitions", [](auto d) { fs::remove(d / "partitions.json"); }),
       "partitions.json: not found"},
      {broken("csv", [](auto d) { fs::remove(d / "frontier_perseus.csv"); }),
       "frontier_perseus.csv: not found"},
      {broken("short_csv",
              [](auto d) {
                std::ofstream(d / "frontier_megatron.csv")
                    << "time_s,energy_j,dynamic_energy_j,plan\n";
              }),
       "frontier_megatron.csv: 0 points, but summary.json has frontier_size = 1"},
  };
  for (const auto& c : cases) {
    testing::expect_rejected(
        KAREUS_BINARY, {"report --plan " + c.dir.string() + " --out " + html.string(), c.message});
    EXPECT_FALSE(fs::exists(html)) << "no partial page";
  }
}

TEST_F(ReportCli, MissingChartLibraryIsNamedBeforeAnythingIsPlanned) {
  const auto out = kTmp / "nolib";
  const std::string env = "KAREUS_REPORT_JS_DIR=" + (kTmp / "empty").string() + " ";
  testing::expect_rejected(
      "env " + env + KAREUS_BINARY,
      {plan_args("--out " + out.string() + " --report " + (kTmp / "nolib.html").string()),
       "vega/build/vega.min.js: not found"});
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(kTmp / "nolib.html"));
}

TEST_F(ReportCli, WrongPlanFolderIsNamedEvenWithoutTheChartLibrary) {
  const std::string env = "KAREUS_REPORT_JS_DIR=" + (kTmp / "empty").string() + " ";
  testing::expect_rejected(
      "env " + env + KAREUS_BINARY,
      {"report --plan " + (kTmp / "no_such_plan").string(), "no_such_plan: not a directory"});
}

}  // namespace
}  // namespace kareus
