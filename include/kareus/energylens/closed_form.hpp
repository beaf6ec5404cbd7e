// The EnergyLens closed form (Palladino et al., arXiv 2605.10556, Eq. 4):
//   E = a_p * in  / (batch^b_p + e_p) * TP^g1p * PP^g2p      (prefill)
//     + a_d * out / (batch^b_d + e_d) * TP^g1d * PP^g2d      (decode)
//     + d1 * TP + d2 * PP                                    (per-degree overhead)
// with the twelve parameters in the order of `Param`. The paper gives no bounds; ours are in
// parameter_info() and docs/energylens.md.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "kareus/energylens/dataset.hpp"

namespace kareus::energylens {

enum Param : std::size_t { a_p, b_p, e_p, g1_p, g2_p, a_d, b_d, e_d, g1_d, g2_d, d1, d2 };
inline constexpr std::size_t kParams = 12;
using Params = std::array<double, kParams>;
using Gradient = std::array<double, kParams>;

struct ParamInfo {
  std::string_view name;
  std::string_view meaning;
  double lower;
  double upper;
  bool linear;  // the closed form is linear in it (a_p, a_d, d1, d2)
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
};
Features features_of(const Sample& s);

double closed_form(const Params& p, const Features& x);
// Value and the analytic gradient with respect to all twelve parameters.
double closed_form(const Params& p, const Features& x, Gradient& grad);

}  // namespace kareus::energylens
