#include "kareus/energylens/closed_form.hpp"

#include <cmath>

namespace kareus::energylens {

const std::array<ParamInfo, kParams>& parameter_info() {
  // Bounds follow /shared/reference/energylens-kerneldvfs.md (our proposal, not the paper's):
  // non-negative scales and overheads, sub- to super-linear batch amortisation, offsets that keep
  // the denominator positive, parallelism exponents in [-2, 2].
  static const std::array<ParamInfo, kParams> info = {{
      {"a_p", "prefill energy scale (J per input token at batch^b_p + e_p = 1)", 0.0, 1e9, true},
      {"b_p", "prefill batch-amortisation exponent", -2.0, 2.0, false},
      {"e_p", "prefill denominator offset (batch = 1 floor)", 1e-6, 1e3, false},
      {"g1_p", "prefill TP scaling exponent", -2.0, 2.0, false},
      {"g2_p", "prefill PP scaling exponent", -2.0, 2.0, false},
      {"a_d", "decode energy scale (J per output token at batch^b_d + e_d = 1)", 0.0, 1e9, true},
      {"b_d", "decode batch-amortisation exponent", -2.0, 2.0, false},
      {"e_d", "decode denominator offset (batch = 1 floor)", 1e-6, 1e3, false},
      {"g1_d", "decode TP scaling exponent", -2.0, 2.0, false},
      {"g2_d", "decode PP scaling exponent", -2.0, 2.0, false},
      {"d1", "fixed overhead per TP degree (J)", 0.0, 1e9, true},
      {"d2", "fixed overhead per PP degree (J)", 0.0, 1e9, true},
  }};
  return info;
}

Features features_of(const Sample& s) {
  return Features{s.tp, s.pp, s.batch, s.input_tokens.value_or(1.0), s.output_tokens};
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

}  // namespace

double closed_form(const Params& p, const Features& x) {
  return phase(p, a_p, x.input_tokens, x, nullptr) + phase(p, a_d, x.output_tokens, x, nullptr) +
         p[d1] * x.tp + p[d2] * x.pp;
}

double closed_form(const Params& p, const Features& x, Gradient& grad) {
  const double e = phase(p, a_p, x.input_tokens, x, &grad) +
                   phase(p, a_d, x.output_tokens, x, &grad) + p[d1] * x.tp + p[d2] * x.pp;
  grad[d1] = x.tp;
  grad[d2] = x.pp;
  return e;
}

}  // namespace kareus::energylens
