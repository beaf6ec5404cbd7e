// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/term_shares.hpp"

#include <algorithm>

namespace kareus::energylens {

namespace {

// The linear parameters whose terms a shape parameter shapes; tau_r scales every term and is
// handled apart.
std::vector<Param> shaped_terms(std::size_t k) {
  switch (k) {
    case b_p:
    case e_p:
    case g1_p:
    case g2_p:
      return {a_p};
    case b_d:
    case e_d:
    case g1_d:
    case g2_d:
      return {a_d};
    default:
      return {};
  }
}

}  // namespace

TermShares term_shares(const EnergyModel& model, const std::vector<Sample>& rows) {
  TermShares out;
  Params max_share{};
  bool run_start = false;
  for (const Sample& s : rows) {
    const Features x = model.features(s);
    run_start = run_start || has_run_start(x);
    Gradient g{};
    const double energy = closed_form(model.params, x, g);
    if (!(energy > 0.0)) continue;
    for (std::size_t k = 0; k < kParams; ++k) {
      if (!parameter_info()[k].linear) continue;
      // The closed form is linear in p_k and p_k enters one term, so p_k x dE/dp_k is that term
      // (times the run-start factor, which the energy carries too).
      const double share = model.params[k] * g[k] / energy;
      out.mean_share[k] += share / static_cast<double>(rows.size());
      max_share[k] = std::max(max_share[k], share);
    }
  }
  for (std::size_t k = 0; k < kParams; ++k) {
    if (parameter_info()[k].linear) {
      out.identified[k] = true;
    } else if (k == tau_r) {
      out.identified[k] = run_start;
    } else {
      const std::vector<Param> terms = shaped_terms(k);
      out.identified[k] = std::any_of(terms.begin(), terms.end(),
                                      [&](Param t) { return max_share[t] >= kMinIdentifiedShare; });
    }
  }
  return out;
}

}  // namespace kareus::energylens
