// SPDX-License-Identifier: Apache-2.0
// The coordinator's MeasuredSink: commits the pieces of an unfinished batch to the measurement
// store under the scope the search itself uses, so that the rerun reuses them.
#pragma once

#include "kareus/scaleout/session.hpp"
#include "kareus/store/store.hpp"

namespace kareus::scaleout {

MeasuredSink commit_to(store::Store& store, const workload::Workload& w);

}  // namespace kareus::scaleout
