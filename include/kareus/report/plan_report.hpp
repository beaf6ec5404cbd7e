// `kareus report --plan DIR`: one self-contained HTML page from the files `kareus plan --out`
// writes — the methods' frontiers with the selected plan, the savings table, the schedule as a
// pipeline timeline, the partition choices and the provenance. docs/report.md.
#pragma once

#include <filesystem>
#include <string>

#include "kareus/core/json.hpp"
#include "kareus/report/chart_library.hpp"

namespace kareus::report {

// The files of a plan directory the page needs, besides one frontier_<method>.csv per method.
inline constexpr const char* kPlanFiles[] = {"summary.json", "schedule.json", "partitions.json"};

// Everything the page shows, read and cross-checked from a plan directory (the schedule is
// re-run on the emulator for the timeline). Throws kareus::Error naming the missing or
// inconsistent file.
Json plan_page_data(const std::filesystem::path& plan_dir);

// The page: `data` embedded as JSON, the charts as Vega-Lite specs, the libraries inlined.
std::string plan_report_html(const Json& data, const ChartLibrary& library);

}  // namespace kareus::report
