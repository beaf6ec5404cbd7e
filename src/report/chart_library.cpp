// SPDX-License-Identifier: Apache-2.0
#include "kareus/report/chart_library.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/paths.hpp"

namespace kareus::report {
namespace {

std::string read_package_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(fmt::format(
        "{}: not found; kareus report inlines it into the page: run scripts/setup.sh (npm ci in "
        "web/) or set KAREUS_REPORT_JS_DIR to a node_modules folder that has it",
        path.string()));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

std::filesystem::path ChartLibrary::default_dir() {
  if (const char* env = std::getenv("KAREUS_REPORT_JS_DIR"); env != nullptr && *env != '\0')
    return env;
  // An installed Kareus carries the three libraries it inlines (cmake/KareusInstall.cmake).
  if (auto share = installed_share_dir()) return *share / "node_modules";
  return KAREUS_DEFAULT_REPORT_JS_DIR;
}

ChartLibrary ChartLibrary::load(const std::filesystem::path& node_modules) {
  ChartLibrary lib;
  lib.vega = read_package_file(node_modules / "vega/build/vega.min.js");
  lib.vega_lite = read_package_file(node_modules / "vega-lite/build/vega-lite.min.js");
  lib.vega_embed = read_package_file(node_modules / "vega-embed/build/vega-embed.min.js");
  for (const char* pkg : {"vega", "vega-lite", "vega-embed"}) {
    const auto path = node_modules / pkg / "package.json";
    read_package_file(path);  // the same message as for the scripts when it is missing
    const auto doc = JsonDocument::load_file(path);
    lib.versions +=
        fmt::format("{}{} {}", lib.versions.empty() ? "" : ", ", pkg, doc.root().string("version"));
  }
  return lib;
}

}  // namespace kareus::report
