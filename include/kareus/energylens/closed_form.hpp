// SPDX-License-Identifier: Apache-2.0
// The EnergyLens closed form (Palladino et al., arXiv 2605.10556, Eq. 4):
//   E = a_p * in  / (batch^b_p + e_p) * TP^g1p * PP^g2p      (prefill)
//     + a_d * out / (batch^b_d + e_d) * TP^g1d * PP^g2d      (decode)
//     + d1 * TP + d2 * PP                                    (per-degree overhead)
// extended by a context term of ours (docs/energylens.md, "Context term"):
//     + c_kv * out * (in + out / 2)                          (KV cache read each decode step)
// and a step term of ours (docs/energylens.md, "Step term"):
//     + c_step * out * TP * PP / batch                       (fixed time of each decode step, on
//                                                             every GPU, shared by the batch)
// where, for a row measured over a run that drains (docs/energylens.md, "Run drain"), the terms
// paid per decode step (decode, c_step) count max(out, ceil(R / (batch x DP)) x cap x batch x DP /
// R) tokens instead of out (the cap when R fills whole waves): a run of R requests serves them in
// waves of batch x DP, each lasting until its longest request reaches the cap; and the whole of it
// times a run-start factor of ours (docs/energylens.md, "Run-start term"), for rows measured over a
// whole run of duration T from its start:
//   E x (1 - phi x tau_r / T x (1 - exp(-T / tau_r)))          (metered power still rising)
// phi: the share of the metered power that rises at the start, from the GPU's static over limit
// power and the GPU counts. Parameters in the order of `Param`.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "kareus/energylens/dataset.hpp"

namespace kareus::energylens {

enum Param : std::size_t {
  a_p,
  b_p,
  e_p,
  g1_p,
  g2_p,
  a_d,
  b_d,
  e_d,
  g1_d,
  g2_d,
  d1,
  d2,
  c_kv,
  c_step,
  tau_r
};
inline constexpr std::size_t kParams = 15;
using Params = std::array<double, kParams>;
using Gradient = std::array<double, kParams>;

struct ParamInfo {
  std::string_view name;
  std::string_view meaning;
  double lower;
  double upper;
  bool linear;  // the closed form is linear in it (a_p, a_d, d1, d2 and every c_)
};

const std::array<ParamInfo, kParams>& parameter_info();

// What the closed form reads from a row. Where a dataset has no input tokens the prefill term
// is kept with input = 1 per request, so a_p absorbs the dataset's (unreported, assumed common)
// mean prompt length: see docs/energylens.md.
struct Features {
  double tp = 1.0;
  double pp = 1.0;
  double batch = 1.0;
  double input_tokens = 1.0;
  double output_tokens = 1.0;
  double dp = 1.0;
  // The run-start factor's inputs: the run's duration, s (0: steady state, no factor), and phi.
  double run_s = 0.0;
  double rising_share = 0.0;
  // Tokens per request that the per-step terms count beyond output_tokens: the decode steps in
  // which its wave waits for the wave's longest request to reach the cap (0: steady state).
  double drain_tokens = 0.0;
};
// `idle_power_share`: the GPU's static over limit power (descriptors.hpp), which sets how much of
// the metered power rises at a run's start; 1 where the GPU is not described (descriptors off), so
// that nothing does.
Features features_of(const Sample& s, double idle_power_share = 1.0);

// Whether the run-start factor applies to the row (it was measured over a whole run).
bool has_run_start(const Features& x);

double closed_form(const Params& p, const Features& x);
// Value and the analytic gradient with respect to all parameters.
double closed_form(const Params& p, const Features& x, Gradient& grad);

}  // namespace kareus::energylens
