// SPDX-License-Identifier: Apache-2.0
// Public kernel-level measurements (data/validation/kernel_figures.csv) beside what the emulator
// gives for the same kernel, shape and clock: the check that every kernel class is right on its
// own before anything is composed from it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kareus/executor/emulator.hpp"

namespace kareus::executor {

struct KernelFigure {
  std::string gpu;
  std::string kernel;  // gemm, attention_fwd, attention_bwd, stream, allreduce, ...
  std::string shape;   // MxNxK, BxHxSxD, bytes, or bytes:ranks[:ctas]
  std::string clock;   // "default" (governor at the power limit) or a locked clock in MHz
  std::string metric;  // tflops, gbps, busbw_gbps, power_w
  double published = 0;
  std::string source;
  int line = 0;  // in the CSV, for messages
};

struct KernelCheck {
  KernelFigure figure;
  double emulated = 0;
  double relative_error() const { return emulated / figure.published - 1.0; }
};

// Reads the figures; bad rows are reported with their file, line, column and value.
std::vector<KernelFigure> load_kernel_figures(const std::filesystem::path& csv);
// The emulator's value for each figure of `emu`'s GPU (rows for other GPUs are skipped).
std::vector<KernelCheck> check_kernel_figures(const emulator::Emulator& emu,
                                              const std::vector<KernelFigure>& figures);

}  // namespace kareus::executor
