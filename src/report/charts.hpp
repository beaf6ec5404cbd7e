// SPDX-License-Identifier: Apache-2.0
// The report's Vega-Lite specs. Each reads named datasets the page fills from its data block,
// and names the mark whose rendered elements the page (and its test) counts.
#pragma once

#include "kareus/core/json.hpp"

namespace kareus::report {

// {"id": element id, "title": ..., "marks": mark name to count, "spec": Vega-Lite spec}
Json frontier_chart(const Json& data);
Json timeline_chart(const Json& data);
Json partitions_chart(const Json& data);

}  // namespace kareus::report
