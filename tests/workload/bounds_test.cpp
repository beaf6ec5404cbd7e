// SPDX-License-Identifier: Apache-2.0
// The bounds a workload is held to before anything is built for it (kareus/core/limits.hpp).
#include <gtest/gtest.h>

#include <string>

#include "common/error_of.hpp"
#include "common/workloads.hpp"
#include "kareus/workload/pipeline.hpp"
#include "kareus/workload/workload.hpp"

namespace kareus::workload {
namespace {

using testing::error_of;

// Llama-3.2-3B on two stages of TP8.
WorkloadRequest with_microbatches(int microbatches) {
  WorkloadRequest r = testing::llama3b_request(8, 1);
  r.where = "w.json";
  r.parallelism.microbatches = microbatches;
  return r;
}

// simulate allocated per microbatch: 10^9 of them ended in vector::_M_default_append (exit 3),
// 10^8 grew to 24 GB. 2 x 2 stages x 62,500 is the bound; one more is refused at once.
TEST(WorkloadBounds, InstructionsPerIterationAreBounded) {
  EXPECT_NO_THROW(make_workload(with_microbatches(62'500)));
  EXPECT_EQ(error_of([] { make_workload(with_microbatches(62'501)); }),
            "w.json: microbatches = 62501: 2 x 2 stages x 62501 microbatches = 250004 instructions "
            "per iteration; at most 250000 (62500 microbatches with 2 stages)");
  EXPECT_NE(error_of([] { make_workload(with_microbatches(1'000'000'000)); })
                .find("w.json: microbatches = 1000000000: 2 x 2 stages x 1000000000 microbatches "
                      "= 4000000000 instructions"),
            std::string::npos);
}

// 2 x stages x microbatches used to overflow an int inside build_1f1b.
TEST(WorkloadBounds, ThePipelineRefusesWhatWouldOverflow) {
  EXPECT_NE(error_of([] { build_1f1b(65'536, 65'536); })
                .find("pipeline: microbatches = 65536: 2 x 65536 stages x 65536 microbatches = "
                      "8589934592 instructions"),
            std::string::npos);
  EXPECT_EQ(build_1f1b(1, 125'000).nodes.size(), 250'000u);
}

}  // namespace
}  // namespace kareus::workload
