// SPDX-License-Identifier: Apache-2.0
// bench_energylens --misses: where EnergyLens orders held-out pairs of one scenario wrong although
// their measured energies are more than kSeparation apart (more than run-to-run noise), on the
// evaluation's random 50-row splits. Each such pair is classed by what separates its two rows, and
// its predicted log ratio is split among the closed form's terms for every fit of the bag, so
// that a miss can be traced to the bag's spread or to a term's shape (the scale multiplier is
// common to a scenario and cancels). Where the rows carry power and time, the measured ratio of
// each miss is split into GPUs, power per GPU and seconds per request, to say which factor of
// energy = power x time the model gets wrong.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "energylens_splits.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/core/statistics.hpp"
#include "kareus/core/table.hpp"
#include "kareus/energylens/closed_form.hpp"
#include "kareus/energylens/descriptors.hpp"
#include "kareus/energylens/evaluate.hpp"
#include "kareus/energylens/fit.hpp"
#include "kareus/energylens/metrics.hpp"

namespace misses {

namespace el = kareus::energylens;

// The closed form's additive terms, by the linear coefficients that switch each on; the run-start
// factor multiplies their sum.
inline const std::array<std::pair<const char*, std::vector<std::size_t>>, 5> kTerms = {{
    {"prefill", {el::a_p}},
    {"decode", {el::a_d}},
    {"per-degree", {el::d1, el::d2}},
    {"context", {el::c_kv}},
    {"step", {el::c_step}},
}};
inline constexpr std::size_t kParts = kTerms.size() + 1;  // the terms and the run-start factor

// One fit's terms for a row, and its run-start factor last.
inline std::array<double, kParts> parts(const el::Params& p, const el::Features& x) {
  std::array<double, kParts> out{};
  el::Params steady = p;
  steady[el::tau_r] = 0.0;
  for (std::size_t t = 0; t < kTerms.size(); ++t) {
    el::Params only = steady;
    for (const auto& [name, coefficients] : kTerms)
      for (std::size_t c : coefficients) only[c] = 0.0;
    for (std::size_t c : kTerms[t].second) only[c] = p[c];
    out[t] = el::closed_form(only, x);
  }
  out.back() = el::closed_form(p, x) / el::closed_form(steady, x);
  return out;
}

// log(f(a) / f(b)) split exactly among the parts: the factor's log ratio, and the sum's log ratio
// shared in proportion to each term's difference (the logarithmic-mean split).
inline std::array<double, kParts> log_ratio_parts(const std::array<double, kParts>& a,
                                                  const std::array<double, kParts>& b) {
  std::array<double, kParts> out{};
  double sa = 0.0, sb = 0.0;
  for (std::size_t t = 0; t + 1 < kParts; ++t) sa += a[t], sb += b[t];
  const double total = std::log(sa / sb);
  for (std::size_t t = 0; t + 1 < kParts; ++t)
    out[t] = sa == sb ? 0.0 : (a[t] - b[t]) / (sa - sb) * total;
  out.back() = std::log(a.back() / b.back());
  return out;
}

// What separates the two rows of a pair; `dear` is the measured dearer row.
inline std::string class_of(const el::Sample& dear, const el::Sample& cheap) {
  auto requests = [](const el::Sample& s) {
    return s.run && s.time ? std::round(s.run->value() / s.time->value()) : 0.0;
  };
  if (dear.tp != cheap.tp || dear.pp != cheap.pp || dear.dp != cheap.dp) {
    const std::string degree = dear.tp * dear.pp * dear.dp > cheap.tp * cheap.pp * cheap.dp
                                   ? "the dearer has more GPUs"
                                   : "the dearer has fewer GPUs";
    if (dear.batch == cheap.batch) return "TP/PP differ, same batch; " + degree;
    return "TP/PP and batch differ; " + degree +
           (dear.batch > cheap.batch ? " and the larger batch" : " and the smaller batch");
  }
  if (dear.batch != cheap.batch) {
    if (!dear.run) return "batch differs, same TP x PP";
    return requests(dear) == requests(cheap) ? "batch differs, same requests"
                                             : "batch and requests differ";
  }
  if (!dear.run) return "same configuration";
  return requests(dear) == requests(cheap) ? "repeat (same batch, same requests)"
                                           : "same batch, requests differ";
}

// A pair's measured log ratio, dearer over cheaper, split into its factors where both rows carry
// power (of all their GPUs) and time: energy = GPUs x power per GPU x the deployment's seconds per
// request (energy / power). Of those seconds, time_s / batch is what the decode steps account for
// (ML.ENERGY's time_s is TPOT x output, so TPOT x output / batch); the rest is time they do not.
// Measurement outputs, never the model's inputs: they say which factor a term's shape gets wrong.
enum Factor : std::size_t { kGpus, kPowerPerGpu, kSeconds, kBeyondDecode, kFactors };
inline const std::array<const char*, kFactors> kFactorNames = {
    "GPUs", "power per GPU", "seconds per request", "of which beyond time_s / batch"};

inline std::optional<std::array<double, kFactors>> factors_of(const el::Sample& s) {
  if (!s.power || !s.time) return std::nullopt;
  const double gpus = s.tp * s.pp * s.dp;
  const double seconds = s.energy->value() / s.power->value();
  return std::array<double, kFactors>{std::log(gpus), std::log(s.power->value() / gpus),
                                      std::log(seconds),
                                      std::log(seconds * s.batch / s.time->value())};
}

struct Class {
  std::size_t pairs = 0, missed = 0;
  // Over the misses: the model's pick (the measured dearer row) has the larger batch, more output
  // tokens, the longer run, the larger TP x PP; the fit to all rows orders it right; members of
  // the bag that order it right (summed).
  std::size_t larger_batch = 0, more_output = 0, longer_run = 0, larger_tp = 0, single_right = 0;
  std::size_t members_right = 0, members = 0;
  std::vector<double> measured_ratio, predicted_ratio;  // dearer over cheaper, misses only
  std::array<double, kParts> parts_missed{}, parts_right{};
  std::size_t right = 0;
  // Over the misses whose rows carry power and time: the factors' log ratios (summed), and how
  // many the GPU-seconds alone (GPUs x seconds) order as measured, so that the model has the
  // time wrong; in the others the power per GPU reverses the order.
  std::array<double, kFactors> factors{};
  std::size_t factored = 0, time_orders = 0;
};

inline std::string share(std::size_t k, std::size_t n) {
  return n ? fmt::format("{:.0f}", 100.0 * static_cast<double>(k) / static_cast<double>(n)) : "-";
}

class Diagnosis {
 public:
  void add_split(const el::Dataset& d, const el::EnergyModel& m,
                 const std::vector<std::size_t>& test) {
    std::vector<const el::EnergyModel*> fits = {&m};
    for (int b = 0; b + 1 < m.bags; ++b) fits.push_back(&m.replicates[b]);
    std::map<std::size_t, std::vector<std::array<double, kParts>>> row_parts;
    std::map<std::size_t, double> predicted;
    for (std::size_t r : test) {
      predicted[r] = m.predict(d.samples[r]).value();
      const el::Features x =
          el::features_of(d.samples[r], cache_.idle_power_share(d.samples[r], "data"));
      for (const el::EnergyModel* f : fits) row_parts[r].push_back(parts(f->params, x));
    }
    for (const auto& g : el::scenario_groups(d.samples, test))
      for (std::size_t i = 0; i < g.size(); ++i)
        for (std::size_t j = i + 1; j < g.size(); ++j) {
          const bool i_dear = d.energy_j(g[i]) > d.energy_j(g[j]);
          const std::size_t dear = i_dear ? g[i] : g[j], cheap = i_dear ? g[j] : g[i];
          add_pair(d, dear, cheap, predicted, row_parts, fits);
        }
  }

  std::string render() const {
    std::size_t all_missed = 0, separated = 0;
    for (const auto& [name, c] : classes_) all_missed += c.missed, separated += c.pairs;
    const std::string summary = fmt::format(
        "Held-out pairs of one scenario with different measured energies, pooled over the "
        "splits: {}, of which {:.0f} ordered wrong (a predicted tie counts half); more than {:g} "
        "% apart: {}, of which {} ordered wrong ({:.1f} % of all misses).\n\n",
        pairs_, misses_, 100 * el::kSeparation, separated, all_missed,
        misses_ > 0 ? 100.0 * static_cast<double>(all_missed) / misses_ : 0.0);
    kareus::TextTable t({"pairs > 5 % apart, what separates the rows", "pairs", "missed",
                         "ranked right %", "share of these misses %",
                         "misses: measured / predicted ratio (median)",
                         "pick has larger batch / more output / longer run / larger TP %",
                         "fit to all rows right % / bag members right %"});
    for (const auto& [name, c] : classes_)
      t.add_row({name, std::to_string(c.pairs), std::to_string(c.missed),
                 share(c.pairs - c.missed, c.pairs), share(c.missed, all_missed),
                 c.missed ? fmt::format("{:.3f} / {:.3f}", kareus::median(c.measured_ratio),
                                        kareus::median(c.predicted_ratio))
                          : "-",
                 fmt::format("{} / {} / {} / {}", share(c.larger_batch, c.missed),
                             share(c.more_output, c.missed), share(c.longer_run, c.missed),
                             share(c.larger_tp, c.missed)),
                 fmt::format("{} / {}", share(c.single_right, c.missed),
                             share(c.members_right, c.members))});
    std::vector<std::string> header = {"mean log ratio, dearer over cheaper (bag)"};
    for (const auto& [name, coefficients] : kTerms) header.push_back(name);
    header.push_back("run start");
    header.push_back("total");
    kareus::TextTable p(header);
    for (const auto& [name, c] : classes_)
      for (const bool missed : {true, false}) {
        const std::size_t n = missed ? c.missed : c.right;
        if (n == 0) continue;
        const auto& sum = missed ? c.parts_missed : c.parts_right;
        std::vector<std::string> row = {name + (missed ? ": missed" : ": right")};
        double total = 0.0;
        for (double v : sum) {
          row.push_back(fmt::format("{:+.3f}", v / static_cast<double>(n)));
          total += v;
        }
        row.push_back(fmt::format("{:+.3f}", total / static_cast<double>(n)));
        p.add_row(row);
      }
    return summary + t.render_markdown() + "\n" + p.render_markdown() + render_factors();
  }

 private:
  std::string render_factors() const {
    std::vector<std::string> header = {"misses with power and time, mean measured log ratio",
                                       "pairs"};
    for (const char* name : kFactorNames) header.push_back(name);
    header.push_back("GPU-seconds order it as measured (time wrong) %");
    kareus::TextTable f(header);
    bool any = false;
    for (const auto& [name, c] : classes_) {
      if (c.factored == 0) continue;
      any = true;
      std::vector<std::string> row = {name, std::to_string(c.factored)};
      for (double v : c.factors)
        row.push_back(fmt::format("{:+.3f}", v / static_cast<double>(c.factored)));
      row.push_back(share(c.time_orders, c.factored));
      f.add_row(row);
    }
    return any ? "\n" + f.render_markdown() : "";
  }

  void add_pair(const el::Dataset& d, std::size_t dear, std::size_t cheap,
                const std::map<std::size_t, double>& predicted,
                const std::map<std::size_t, std::vector<std::array<double, kParts>>>& row_parts,
                const std::vector<const el::EnergyModel*>& fits) {
    const double measured = d.energy_j(dear) / d.energy_j(cheap);
    if (measured == 1.0) return;  // a measured tie, which the pairwise metric skips
    const double ratio = predicted.at(dear) / predicted.at(cheap);
    ++pairs_;
    misses_ += ratio < 1.0 ? 1.0 : ratio == 1.0 ? 0.5 : 0.0;
    if (measured <= 1.0 + el::kSeparation) return;
    const el::Sample &a = d.samples[dear], &b = d.samples[cheap];
    Class& c = classes_[class_of(a, b)];
    ++c.pairs;
    if (ratio == 1.0) return;  // a predicted tie: half a miss in the metric, left out here
    const bool missed = ratio < 1.0;
    std::array<double, kParts> mean{};
    for (std::size_t k = 0; k < fits.size(); ++k) {
      const auto lr = log_ratio_parts(row_parts.at(dear)[k], row_parts.at(cheap)[k]);
      for (std::size_t t = 0; t < kParts; ++t) mean[t] += lr[t] / static_cast<double>(fits.size());
    }
    auto& sum = missed ? c.parts_missed : c.parts_right;
    for (std::size_t t = 0; t < kParts; ++t) sum[t] += mean[t];
    if (!missed) {
      ++c.right;
      return;
    }
    ++c.missed;
    c.measured_ratio.push_back(measured);
    c.predicted_ratio.push_back(ratio);
    c.larger_batch += a.batch > b.batch;
    c.more_output += a.output_tokens > b.output_tokens;
    c.longer_run += a.run && b.run && a.run->value() > b.run->value();
    c.larger_tp += a.tp * a.pp > b.tp * b.pp;
    if (const auto fa = factors_of(a), fb = factors_of(b); fa && fb) {
      for (std::size_t k = 0; k < kFactors; ++k) c.factors[k] += (*fa)[k] - (*fb)[k];
      ++c.factored;
      c.time_orders += (*fa)[kGpus] + (*fa)[kSeconds] > (*fb)[kGpus] + (*fb)[kSeconds];
    }
    c.single_right += fits[0]->predict_single(a).value() > fits[0]->predict_single(b).value();
    for (const el::EnergyModel* f : fits)
      c.members_right += f->predict_single(a).value() > f->predict_single(b).value();
    c.members += fits.size();
  }

  el::DescriptorCache cache_;
  std::map<std::string, Class> classes_;
  std::size_t pairs_ = 0;
  double misses_ = 0.0;
};

// The evaluation's random splits, energylens alone.
inline std::string diagnose(const el::Dataset& d, const el::EvaluateOptions& o) {
  Diagnosis diagnosis;
  splits::for_each_random_split(
      d, o, [&](const el::EnergyModel& m, const auto& test) { diagnosis.add_split(d, m, test); });
  return diagnosis.render();
}

}  // namespace misses
