// SPDX-License-Identifier: Apache-2.0
// `kareus report --plan DIR`: one self-contained HTML page from the files `kareus plan --out`
// writes — the methods' frontiers with the selected plan, the savings table, the schedule as a
// pipeline timeline, the partition choices and the provenance. docs/report.md.
#pragma once

#include <string>

#include "kareus/core/json.hpp"
#include "kareus/plan_dir/plan_files.hpp"
#include "kareus/report/chart_library.hpp"

namespace kareus::report {

// Everything the page shows, read and cross-checked from a plan's files (the schedule is re-run on
// the emulator for the timeline). Throws kareus::Error naming the missing or inconsistent file.
Json plan_page_data(const plan_dir::PlanFiles& files);

// The page: `data` embedded as JSON, the charts as Vega-Lite specs, the libraries inlined.
std::string plan_report_html(const Json& data, const ChartLibrary& library);

}  // namespace kareus::report
