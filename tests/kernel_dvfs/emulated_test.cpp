// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <algorithm>

#include "kareus/core/error.hpp"
#include "kareus/kernel_dvfs/emulated.hpp"

namespace kareus::kernel_dvfs {
namespace {

TEST(Emulated, ClassifiesKernelNames) {
  using workload::KernelKind;
  EXPECT_EQ(classify_kernel("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn"),
            KernelKind::kGemm);
  EXPECT_EQ(classify_kernel("fmha_cutlassF_f16_aligned_64x64_rf_sm80(...)"),
            KernelKind::kAttention);
  EXPECT_EQ(
      classify_kernel("void at::native::vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>"),
      KernelKind::kMemory);
}

TEST(Emulated, ScaledTraceKeepsTheMeasuredClockAndSlowsComputeMore) {
  const GpuSpec gpu = load_gpu("rtx3080ti");
  const auto trace = load_torch_trace(KAREUS_TEST_DATA_DIR "/kernel_dvfs/gpt_layer_trace.json");
  const MHz recorded(1665);
  const auto seq = scale_trace(trace, recorded, gpu, planning_clocks(gpu));
  ASSERT_EQ(seq.kernels.size(), trace.kernels.size());
  const auto at = static_cast<std::size_t>(
      std::find(seq.clocks.begin(), seq.clocks.end(), recorded) - seq.clocks.begin());
  ASSERT_LT(at, seq.clocks.size());
  ASSERT_FALSE(seq.notes.empty());
  double gemm_slowdown = 0, memory_slowdown = 0;
  for (std::size_t k = 0; k < seq.kernels.size(); ++k) {
    EXPECT_NEAR(seq.kernels[k].time[at].value(), trace.kernels[k].duration.value(), 1e-12);
    EXPECT_EQ(seq.kernels[k].pass, trace.kernels[k].pass);
    const double s = seq.kernels[k].time.front() / seq.kernels[k].time[at];
    const auto kind = classify_kernel(seq.kernels[k].name);
    if (kind == workload::KernelKind::kGemm) gemm_slowdown = std::max(gemm_slowdown, s);
    if (kind == workload::KernelKind::kMemory) memory_slowdown = std::max(memory_slowdown, s);
  }
  EXPECT_GT(gemm_slowdown, 1.3);  // 915 vs 1665 MHz on a compute-bound kernel
  EXPECT_LT(memory_slowdown, gemm_slowdown);
}

TEST(Emulated, RejectsATraceClockTheGpuDoesNotHave) {
  const GpuSpec gpu = load_gpu("rtx3080ti");
  const auto trace = load_torch_trace(KAREUS_TEST_DATA_DIR "/kernel_dvfs/gpt_layer_trace.json");
  try {
    scale_trace(trace, MHz(1666), gpu, planning_clocks(gpu));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "trace_clock");
    EXPECT_NE(std::string(e.what()).find("trace_clock = 1666: unknown clock"), std::string::npos)
        << e.what();
  }
}

TEST(Emulated, LayersRunForwardThenBackwardAtEveryClock) {
  workload::WorkloadRequest request;
  request.model = "gpt3-xl";
  request.gpu = "rtx3080ti";
  request.training_job = false;  // two layers' kernels, not the whole model's training
  const auto w = workload::make_workload(request);
  const auto clocks = planning_clocks(w.gpu);
  const auto seq = emulate_layers(w, 2, clocks);
  EXPECT_EQ(seq.clocks, clocks);
  const auto forward = static_cast<std::size_t>(
      std::count_if(seq.kernels.begin(), seq.kernels.end(),
                    [](const auto& k) { return k.pass == Direction::kForward; }));
  ASSERT_GT(forward, 0u);
  ASSERT_LT(forward, seq.kernels.size());
  for (std::size_t k = 0; k < seq.kernels.size(); ++k)
    EXPECT_EQ(seq.kernels[k].pass, k < forward ? Direction::kForward : Direction::kBackward);
  EXPECT_EQ(seq.kernels.front().name.substr(0, 3), "L0/");
  EXPECT_EQ(seq.kernels[forward].name.substr(0, 3), "L1/");  // backward starts at the last layer
  EXPECT_THROW(emulate_layers(w, 0, clocks), Error);
}

}  // namespace
}  // namespace kareus::kernel_dvfs
