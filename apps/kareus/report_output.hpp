// Writing a report page, shared by `kareus report` and `kareus plan --report`.
#pragma once

#include <filesystem>

#include "kareus/report/chart_library.hpp"

namespace kareus::cli {

// Builds the page from `plan_dir` and writes it atomically to `html`: nothing is written when
// any file is missing or wrong.
void write_plan_report(const std::filesystem::path& plan_dir, const std::filesystem::path& html,
                       const report::ChartLibrary& library);

}  // namespace kareus::cli
