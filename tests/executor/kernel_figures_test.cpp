// SPDX-License-Identifier: Apache-2.0
// Every kernel class on its own against public kernel-level measurements
// (data/validation/kernel_figures.csv: GEMMs, FlashAttention forward and backward, memory-bound
// streams, NCCL collectives, their power), each within 10 % on the GPU it was measured on.
#include <gtest/gtest.h>

#include <set>

#include "common/scratch_dir.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/paths.hpp"
#include "kareus/executor/kernel_figures.hpp"
#include "kareus/hardware/gpu_spec.hpp"

namespace kareus::executor {
namespace {

std::vector<KernelFigure> figures() {
  return load_kernel_figures(data_dir() / "validation" / "kernel_figures.csv");
}

TEST(KernelFigures, EveryPublicFigureWithinTenPercent) {
  const auto rows = figures();
  std::set<std::string> gpus, classes;
  for (const auto& f : rows) gpus.insert(f.gpu);
  std::size_t checked = 0;
  for (const auto& gpu : gpus) {
    const emulator::Emulator emu(load_gpu(gpu));
    for (const KernelCheck& c : check_kernel_figures(emu, rows)) {
      EXPECT_NEAR(c.relative_error(), 0.0, 0.10)
          << gpu << " " << c.figure.kernel << " " << c.figure.shape << " " << c.figure.metric
          << ": published " << c.figure.published << ", emulated " << c.emulated << " (line "
          << c.figure.line << ")";
      classes.insert(c.figure.kernel + "/" + c.figure.metric);
      ++checked;
    }
  }
  EXPECT_EQ(checked, rows.size());
  // Each class the emulator composes iterations from has at least one figure.
  for (const char* needed : {"gemm/tflops", "attention_fwd/tflops", "attention_bwd/tflops",
                             "stream/gbps", "stream/power_w", "allreduce/busbw_gbps",
                             "allreduce/stream_busbw_gbps", "allreduce/power_w"})
    EXPECT_TRUE(classes.count(needed)) << needed;
}

TEST(KernelFigures, ARowWithoutASourceOrWithAnUnknownKernelIsNamed) {
  kareus::testing::ScratchDir dir("kernel_figures_test");
  const auto csv = dir.path() / "figures.csv";
  write_file_atomically(csv,
                        "gpu,kernel,shape,clock,metric,published,source\n"
                        "a100-sxm4-40gb,gemm,64x64x64,default,tflops,1,\n");
  EXPECT_THROW(load_kernel_figures(csv), Error);
  write_file_atomically(csv,
                        "gpu,kernel,shape,clock,metric,published,source\n"
                        "a100-sxm4-40gb,conv,64x64x64,default,tflops,1,a paper\n");
  const emulator::Emulator emu(load_gpu("a100-sxm4-40gb"));
  try {
    check_kernel_figures(emu, load_kernel_figures(csv));
    FAIL() << "an unknown kernel class was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("conv"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kareus::executor
