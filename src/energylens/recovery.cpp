// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/recovery.hpp"

#include <fmt/format.h>

#include <cmath>

#include "kareus/energylens/fit.hpp"
#include "scaled_loss.hpp"

namespace kareus::energylens {
namespace {

// A model's values on the rows, each group's optimal multiplier applied: the fitted predictions
// and their RMS relative error. Empty when the model is undefined on some row.
struct Fitted {
  std::vector<double> prediction;
  double rms = 0.0;
};

Fitted with_group_multipliers(const std::vector<double>& f, const std::vector<double>& energy,
                              const detail::ScaleGroups& groups) {
  std::vector<double> scales;
  const double loss = detail::scaled_loss(f, energy, groups, nullptr, 0, nullptr, &scales);
  Fitted out;
  if (!std::isfinite(loss) || scales.size() != groups.names.size()) return out;
  for (std::size_t i = 0; i < f.size(); ++i)
    out.prediction.push_back(scales[groups.of_row[i]] * f[i]);
  out.rms = std::sqrt(loss);
  return out;
}

// The hand-written form's values before the group multipliers. With descriptors its scale is the
// descriptor term alone (no per-group effect): discovery gets no more than its own multipliers.
std::vector<double> closed_form_values(const std::vector<Sample>& rows,
                                       const DiscoverOptions& options) {
  FitOptions fo;
  fo.seed = options.seed;
  fo.descriptors = options.descriptors;
  // Descriptor exponents are regressed on per-(model, GPU) multipliers; coarser groups would
  // leave nothing to regress.
  fo.scale_by = options.descriptors ? std::vector<std::string>{"model", "gpu"} : options.scale_by;
  const EnergyModel model = fit_energy_model(rows, fo);
  DescriptorCache cache;
  std::vector<double> f;
  for (const Sample& s : rows) {
    double scale = 1.0;
    if (options.descriptors) {
      const ScaleVector& x = cache.of(s, "data");
      double log_scale = 0.0;
      for (std::size_t j = 0; j < model.scale_exponents.size(); ++j)
        log_scale += model.scale_exponents[j] * x[j];
      scale = std::exp(log_scale);
    }
    f.push_back(
        scale *
        closed_form(model.params,
                    features_of(s, options.descriptors ? cache.idle_power_share(s, "data") : 1.0)));
  }
  return f;
}

double rms_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += std::pow(a[i] / b[i] - 1.0, 2);
  return std::sqrt(sum / static_cast<double>(a.size()));
}

bool within(double x, double reference) {
  return x <= reference * (1.0 + kRecoveryTolerance) + kRecoveryFloor;
}

// The groups whose multipliers both forms get. The hand-written form's descriptor scale carries a
// factor per workload, fitted together with its exponents (without it they misstate its level),
// and discovery has no workload variable: so both are compared with a multiplier per workload at
// least, which absorbs the factor, and neither gets what the other lacks. The groups of
// --scale-by already split by workload unless it is none.
detail::ScaleGroups comparison_groups(const Dataset& rows, const DiscoverOptions& options) {
  return detail::ScaleGroups(rows.samples, [&](const Sample& s) {
    const std::string key = scale_group_key(s, options.scale_by);
    return key.empty() ? s.workload : key;
  });
}

}  // namespace

RecoveryVerdict compare_with_closed_form(const Dataset& rows, const DiscoverResult& result,
                                         const DiscoverOptions& options) {
  const detail::ScaleGroups groups = comparison_groups(rows, options);
  std::vector<double> energy;
  for (const Sample& s : rows.samples) energy.push_back(s.energy->value());
  const Fitted hand =
      with_group_multipliers(closed_form_values(rows.samples, options), energy, groups);
  RecoveryVerdict v;
  v.closed_form_rms = hand.rms;
  const double allowed = std::max(hand.rms, kRecoveryFloor);
  bool have_best = false;
  for (std::size_t m = 0; m < result.front.size(); ++m) {
    std::vector<double> f;
    for (const Sample& s : rows.samples) f.push_back(result.front[m].expression.evaluate(s));
    const Fitted found = with_group_multipliers(f, energy, groups);
    if (found.prediction.empty() || hand.prediction.empty()) continue;
    const double disagreement = rms_difference(found.prediction, hand.prediction);
    const bool same =
        within(found.rms, hand.rms) && within(hand.rms, found.rms) && disagreement <= allowed;
    // Keep the simplest match; failing one, the best fit (the front's loss falls with size).
    if (!v.recovered && (same || !have_best || found.rms < v.expression_rms)) {
      v.recovered = same;
      v.member = m;
      v.expression_rms = found.rms;
      v.disagreement = disagreement;
      have_best = true;
    }
  }
  const double pct = 100.0;
  if (!have_best) {
    v.line =
        "does not recover the hand-written form: no discovered expression is defined on "
        "every row";
    return v;
  }
  const std::string expr = result.front[v.member].expression.to_string();
  const std::string errors =
      fmt::format("RMS relative error {:.1f} % vs the closed form's {:.1f} %",
                  pct * v.expression_rms, pct * v.closed_form_rms);
  if (v.recovered)
    v.line = fmt::format(
        "recovers the hand-written form: `{}` fits like it ({}) and predicts within {:.1f} % of it",
        expr, errors, pct * v.disagreement);
  else if (!within(v.closed_form_rms, v.expression_rms))
    v.line = fmt::format(
        "does not recover the hand-written form: `{}` fits better ({}); the data follow a form "
        "the closed form lacks",
        expr, errors);
  else if (!within(v.expression_rms, v.closed_form_rms))
    v.line = fmt::format(
        "does not recover the hand-written form: no expression fits as well as it (best `{}`, "
        "{}); the search did not reach it",
        expr, errors);
  else
    v.line = fmt::format(
        "does not recover the hand-written form: `{}` fits alike ({}) but predicts {:.1f} % "
        "apart from it (more than the {:.1f} % it leaves as noise)",
        expr, errors, pct * v.disagreement, pct * allowed);
  return v;
}

}  // namespace kareus::energylens
