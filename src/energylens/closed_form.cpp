// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/closed_form.hpp"

#include <algorithm>
#include <cmath>

namespace kareus::energylens {

const std::array<ParamInfo, kParams>& parameter_info() {
  // The paper gives no bounds; these are ours: non-negative scales and overheads, sub- to
  // super-linear batch amortisation, offsets that keep the denominator positive, parallelism
  // exponents in [-2, 2].
  static const std::array<ParamInfo, kParams> info = {{
      {"a_p", "prefill J per input token (at batch^b_p + e_p = 1)", 0.0, 1e9, true},
      {"b_p", "prefill batch-amortisation exponent", -2.0, 2.0, false},
      {"e_p", "prefill denominator offset (batch = 1 floor)", 1e-6, 1e3, false},
      {"g1_p", "prefill TP scaling exponent", -2.0, 2.0, false},
      {"g2_p", "prefill PP scaling exponent", -2.0, 2.0, false},
      {"a_d", "decode J per output token (at batch^b_d + e_d = 1)", 0.0, 1e9, true},
      {"b_d", "decode batch-amortisation exponent", -2.0, 2.0, false},
      {"e_d", "decode denominator offset (batch = 1 floor)", 1e-6, 1e3, false},
      {"g1_d", "decode TP scaling exponent", -2.0, 2.0, false},
      {"g2_d", "decode PP scaling exponent", -2.0, 2.0, false},
      {"d1", "fixed overhead per TP degree (J)", 0.0, 1e9, true},
      {"d2", "fixed overhead per PP degree (J)", 0.0, 1e9, true},
      // Ours: the KV cache each decode step reads; not amortised over the batch.
      {"c_kv", "context: J per output token per token before it", 0.0, 1e9, true},
      // Ours: the part of each decode step that does not shrink with the work (launches,
      // scheduling, synchronisation), paid on every GPU and shared by the batch.
      {"c_step", "step overhead: J per decode step per GPU", 0.0, 1e9, true},
      // Ours: how long the metered power takes to rise to its loaded level at the start of a
      // run; up to a minute (a GPU reaches its loaded power within seconds).
      {"tau_r", "run-start time constant (s)", 0.0, 60.0, false},
  }};
  return info;
}

Features features_of(const Sample& s, double idle_power_share) {
  Features x{s.tp, s.pp, s.batch, s.input_tokens.value_or(1.0), s.output_tokens, s.dp};
  if (s.run) {
    // A GPU at rest draws about its static power sigma x limit; the serving GPUs rise from there
    // to about the limit, while the idle metered ones stay at rest. phi is the rising part's
    // share of the loaded total (0 without descriptors, where sigma is 1).
    const double serving = s.tp * s.pp * s.dp;
    const double idle = s.gpus_metered.value_or(serving) - serving;
    const double sigma = idle_power_share;
    x.run_s = s.run->value();
    x.rising_share = serving * (1.0 - sigma) / (serving + idle * sigma);
  }
  if (s.max_output_tokens && s.requests) {
    // The run serves its requests in waves of batch x DP, and a wave lasts until its longest
    // request reaches the cap (TokenPowerBench's runs last waves x the time of one, whatever the
    // requests' mean output): waves x cap steps, which per request and slot is this many tokens
    // more than its own output.
    const double slots = s.batch * s.dp;
    const double steps =
        std::ceil(*s.requests / slots) * *s.max_output_tokens * slots / *s.requests;
    x.drain_tokens = std::max(steps - s.output_tokens, 0.0);
  }
  return x;
}

namespace {

// One phase term a * tokens / (batch^b + e) * TP^g1 * PP^g2 and its partial derivatives, written
// into grad[first..first+4].
double phase(const Params& p, std::size_t first, double tokens, const Features& x, Gradient* grad) {
  const double a = p[first], b = p[first + 1], e = p[first + 2];
  const double g1 = p[first + 3], g2 = p[first + 4];
  const double bb = std::pow(x.batch, b);
  const double denom = bb + e;
  const double par = std::pow(x.tp, g1) * std::pow(x.pp, g2);
  const double unit = tokens / denom * par;
  const double term = a * unit;
  if (grad) {
    (*grad)[first] = unit;
    (*grad)[first + 1] = -term * bb * std::log(x.batch) / denom;
    (*grad)[first + 2] = -term / denom;
    (*grad)[first + 3] = term * std::log(x.tp);
    (*grad)[first + 4] = term * std::log(x.pp);
  }
  return term;
}

// Decode steps per request times the batch: its output, plus its share of the run's drain.
double step_tokens(const Features& x) {
  return x.output_tokens + x.drain_tokens;
}

// Per-unit values of the linear overhead, KV and step terms, in the order d1, d2, c_kv, c_step.
// Decode step t reads the KV cache of the in + t tokens before it, out x (in + out / 2) in all,
// whatever the batch, and only while the request runs; each decode step has a fixed part on all
// TP x PP GPUs that the batch of requests share.
std::array<double, 4> linear_units(const Features& x) {
  return {x.tp, x.pp, x.output_tokens * (x.input_tokens + 0.5 * x.output_tokens),
          step_tokens(x) * x.tp * x.pp / x.batch};
}
constexpr std::array<std::size_t, 4> kLinearTail = {d1, d2, c_kv, c_step};

}  // namespace

bool has_run_start(const Features& x) {
  return x.run_s > 0.0 && x.rising_share > 0.0;
}

namespace {

// The run-start factor 1 - phi x h(tau) with h = tau / T x (1 - exp(-T / tau)): the mean, over a
// run of duration T, of a rise exp(-t / tau) of the rising share phi of the metered power. h
// falls from 1 (tau >> T) to 0 (tau = 0). `slope` receives d(factor) / d(tau).
double run_start(double tau, const Features& x, double* slope) {
  if (!has_run_start(x)) {
    if (slope) *slope = 0.0;
    return 1.0;
  }
  if (tau <= 0.0) {  // h -> 0 as tau -> 0, with dh/dtau -> 1 / T
    if (slope) *slope = -x.rising_share / x.run_s;
    return 1.0;
  }
  const double u = x.run_s / tau;
  const double rest = std::exp(-u);
  const double h = (1.0 - rest) / u;
  if (slope) *slope = -x.rising_share * ((1.0 - rest) / x.run_s - rest / tau);
  return 1.0 - x.rising_share * h;
}

}  // namespace

double closed_form(const Params& p, const Features& x) {
  double e = phase(p, a_p, x.input_tokens, x, nullptr) + phase(p, a_d, step_tokens(x), x, nullptr);
  const auto units = linear_units(x);
  for (std::size_t j = 0; j < units.size(); ++j) e += p[kLinearTail[j]] * units[j];
  return e * run_start(p[tau_r], x, nullptr);
}

double closed_form(const Params& p, const Features& x, Gradient& grad) {
  const double decode = phase(p, a_d, step_tokens(x), x, &grad);
  double e = phase(p, a_p, x.input_tokens, x, &grad) + decode;
  const auto units = linear_units(x);
  for (std::size_t j = 0; j < units.size(); ++j) {
    e += p[kLinearTail[j]] * units[j];
    grad[kLinearTail[j]] = units[j];
  }
  double slope = 0.0;
  const double factor = run_start(p[tau_r], x, &slope);
  for (double& g : grad) g *= factor;
  grad[tau_r] = e * slope;
  return e * factor;
}

}  // namespace kareus::energylens
