// SPDX-License-Identifier: Apache-2.0
#include "kareus/calibration/free_constants.hpp"

#include <gtest/gtest.h>

#include <set>

namespace kareus::calibration {
namespace {

TEST(FreeConstants, FittedChosenAndDerivedAreFreePublishedAreNot) {
  EXPECT_TRUE(is_free("fitted with uncore_active_power_w to the measured energy ..."));
  EXPECT_TRUE(is_free("chosen: a kernel stretched by interference ..."));
  EXPECT_TRUE(is_free("FlashAttention-2 paper ... the forward efficiency scaled [derived]"));
  EXPECT_FALSE(is_free("A100 datasheet: 312 TFLOPS BF16 dense at 1410 MHz"));
  EXPECT_FALSE(is_free("nvidia-smi -q on an A100-SXM4-40GB"));
  EXPECT_FALSE(is_free("the low end of that range [E]"));
}

TEST(FreeConstants, TheA100sFittedConstantsAreFreeAndItsDatasheetIsNot) {
  std::set<std::string> free;
  for (const auto& c : free_constants(read_gpu_file("a100-sxm4-40gb"))) free.insert(c.key);
  for (const char* key :
       {"gemm_mma_efficiency", "gemm_k_overhead", "attention_forward_efficiency",
        "attention_backward_efficiency", "dynamic_power_coefficient_w_per_ghz_v2",
        "uncore_active_power_w", "data_movement_sm_activity", "collective_sm_activity",
        "sm_resident_power_fraction", "interference_memory_bound_gain"})
    EXPECT_TRUE(free.count(key)) << key;
  for (const char* key :
       {"sm_count", "clock_max_mhz", "peak_bf16_dense_tflops", "memory_bandwidth_gbps",
        "power_limit_default_w", "static_power_w", "memory_efficiency", "hbm_bytes_per_link_byte"})
    EXPECT_FALSE(free.count(key)) << key;
}

TEST(FreeConstants, EveryCatalogueValueLiesInsideItsPhysicalBounds) {
  for (const auto& name : list_gpus()) {
    for (const auto& c : free_constants(read_gpu_file(name))) {
      if (!c.bounds) continue;
      EXPECT_LT(c.bounds->lower, c.bounds->upper) << name << " " << c.key;
      EXPECT_GE(c.value, c.bounds->lower) << name << " " << c.key << ": " << c.bounds->why;
      EXPECT_LE(c.value, c.bounds->upper) << name << " " << c.key << ": " << c.bounds->why;
    }
  }
}

}  // namespace
}  // namespace kareus::calibration
