// The coordinator's MeasuredSink that commits each arriving piece of a batch to the measurement
// store in its own transaction, under the scope the search itself uses, so pieces received before
// a rank died are reused by the rerun.
#pragma once

#include "kareus/scaleout/session.hpp"
#include "kareus/store/store.hpp"

namespace kareus::scaleout {

MeasuredSink commit_to(store::Store& store, const workload::Workload& w);

}  // namespace kareus::scaleout
