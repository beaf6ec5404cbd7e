// SPDX-License-Identifier: Apache-2.0
// The charting libraries a report page inlines (Vega, Vega-Lite, vega-embed; BSD-3-Clause), read
// from the npm packages scripts/setup.sh installs, so that the page opens without a network.
#pragma once

#include <filesystem>
#include <string>

namespace kareus::report {

struct ChartLibrary {
  std::string vega;
  std::string vega_lite;
  std::string vega_embed;
  std::string versions;  // "vega 6.4.0, vega-lite 6.5.0, vega-embed 7.3.0", for the page's footer

  // $KAREUS_REPORT_JS_DIR when set, else <prefix>/share/kareus/node_modules of an installed
  // Kareus, else web/node_modules of the source tree Kareus was built from.
  static std::filesystem::path default_dir();
  // Throws kareus::Error naming the missing file and how to install it.
  static ChartLibrary load(const std::filesystem::path& node_modules);
};

}  // namespace kareus::report
