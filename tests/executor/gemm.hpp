// SPDX-License-Identifier: Apache-2.0
// The GEMM the emulator's tests run: a product of the given shape, named "gemm".
#pragma once

#include "kareus/workload/kernels.hpp"

namespace kareus::emulator {

inline workload::Kernel gemm(double m, double n, double k) {
  return workload::gemm_kernel("gemm", m, n, k);
}

}  // namespace kareus::emulator
