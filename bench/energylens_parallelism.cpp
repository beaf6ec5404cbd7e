// SPDX-License-Identifier: Apache-2.0
// Diagnosis of EnergyLens's leave-one-parallelism-out protocol on ML.ENERGY v2: per held-out
// TP x PP configuration, how large and of which sign the error is, whether it sits in rows whose
// (model, GPU) group the training rows saw or in new groups, and which terms of the closed form
// carry the prediction there. Prints markdown for docs/benchmarks/energylens.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kareus/core/paths.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/core/statistics.hpp"
#include "kareus/core/table.hpp"
#include "kareus/energylens/fit.hpp"
#include "kareus/energylens/import.hpp"

namespace el = kareus::energylens;
using kareus::median;

namespace {

constexpr int kSeeds = 10;
constexpr std::size_t kTrain = 50;

std::string config_of(const el::Sample& s) {
  return fmt::format("tp{} pp{}", s.tp, s.pp);
}

double mean(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x;
  return v.empty() ? std::nan("") : sum / static_cast<double>(v.size());
}

// Share of the single fit's prediction for `s` that one group of parameters carries: the
// closed form is a sum of terms, so zeroing a term's linear coefficient removes exactly it.
double share(const el::EnergyModel& m, const el::Sample& s, std::initializer_list<el::Param> p) {
  el::EnergyModel without = m;
  without.bags = 1;
  for (el::Param k : p) without.params[k] = 0.0;
  return 1.0 - without.predict_single(s).value() / m.predict_single(s).value();
}

struct Fold {
  std::vector<double> log_ratio, seen_log_ratio, unseen_log_ratio;
  // Per (seed, group): the mean log ratio of the group's held-out rows, and the rows' spread
  // around it (the shape's error once the group's level is right).
  std::vector<double> group_level, within_group;
  std::map<std::string, std::vector<double>> by_group;  // group (seen or new) -> log ratios
  std::map<std::string, std::vector<double>> shares, params;
};

std::string pct_of_log(double x) {
  return fmt::format("{:+.0f}", 100.0 * (std::exp(x) - 1.0));
}

double mape_of(const std::vector<double>& log_ratio) {
  double sum = 0.0;
  for (double r : log_ratio) sum += std::abs(std::exp(r) - 1.0);
  return log_ratio.empty() ? std::nan("") : 100.0 * sum / static_cast<double>(log_ratio.size());
}

void add_fold(const el::EnergyModel& m, const std::vector<el::Sample>& test, Fold& f) {
  std::map<std::string, std::vector<double>> by_group;
  for (const el::Sample& s : test) {
    const double r = std::log(m.predict(s).value() / s.energy->value());
    f.log_ratio.push_back(r);
    const std::string key = el::scale_group_key(s, m.scale_by);
    (m.scales.contains(key) ? f.seen_log_ratio : f.unseen_log_ratio).push_back(r);
    by_group[key].push_back(r);
    f.by_group[key + (m.scales.contains(key) ? " (seen)" : " (new)")].push_back(r);
    f.shares["prefill"].push_back(share(m, s, {el::a_p}));
    f.shares["decode"].push_back(share(m, s, {el::a_d}));
    f.shares["d1 TP + d2 PP"].push_back(share(m, s, {el::d1, el::d2}));
    f.shares["c_kv"].push_back(share(m, s, {el::c_kv}));
    f.shares["c_step"].push_back(share(m, s, {el::c_step}));
  }
  for (const auto& [key, rs] : by_group) {
    const double level = mean(rs);
    f.group_level.push_back(level);
    for (double r : rs) f.within_group.push_back(r - level);
  }
  for (el::Param k : {el::g1_p, el::g1_d, el::g2_d, el::b_d})
    f.params[std::string(el::parameter_info()[k].name)].push_back(m.params[k]);
  if (!m.scale_exponents.empty())
    f.params["k_params + k_active"].push_back(m.scale_exponents[el::log_params] +
                                              m.scale_exponents[el::log_active_params]);
}

double rms(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x * x;
  return v.empty() ? std::nan("") : std::sqrt(sum / static_cast<double>(v.size()));
}

}  // namespace

int main() {
  const auto path = kareus::data_dir() / "energylens/mlenergy-v2/mlenergy_v2_llm_configs.csv";
  const el::Dataset d = el::import_dataset(el::ImportFormat::kMlenergyV2, path).data;
  el::FitOptions fit;
  fit.descriptors = true;
  fit.bags = el::kDefaultBags;
  std::set<std::string> configs;
  for (const el::Sample& s : d.samples) configs.insert(config_of(s));
  std::map<std::string, Fold> folds;
  kareus::Rng rng(1);
  for (int seed = 0; seed < kSeeds; ++seed)
    for (const std::string& held : configs) {
      std::vector<el::Sample> others, test;
      for (const el::Sample& s : d.samples) (config_of(s) == held ? test : others).push_back(s);
      std::vector<el::Sample> train;
      for (std::size_t k : rng.sample_without_replacement(others.size(), kTrain))
        train.push_back(others[k]);
      el::FitOptions f = fit;
      f.seed = rng.fork_seed();
      add_fold(el::fit_energy_model(train, f), test, folds[held]);
    }
  kareus::TextTable errors({"held out", "rows", "rows in seen groups %", "MAPE %", "median error %",
                            "rows > 2x off %", "MAPE seen / new groups %",
                            "median error seen / new %", "RMS group level / within group, log"});
  kareus::TextTable carried({"held out", "prefill %", "decode %", "d1 TP + d2 PP %", "c_kv %",
                             "c_step %", "g1_p", "g1_d", "g2_d", "b_d", "k_params + k_active"});
  for (const auto& [held, f] : folds) {
    const double n = static_cast<double>(f.log_ratio.size());
    const double far =
        static_cast<double>(std::count_if(f.log_ratio.begin(), f.log_ratio.end(),
                                          [](double r) { return std::abs(r) > std::log(2.0); }));
    errors.add_row(
        {held, fmt::format("{:.0f}", n / kSeeds),
         fmt::format("{:.0f}", 100.0 * static_cast<double>(f.seen_log_ratio.size()) / n),
         fmt::format("{:.1f}", mape_of(f.log_ratio)), pct_of_log(median(f.log_ratio)),
         fmt::format("{:.0f}", 100.0 * far / n),
         fmt::format("{:.1f} / {:.1f}", mape_of(f.seen_log_ratio), mape_of(f.unseen_log_ratio)),
         fmt::format("{} / {}", pct_of_log(median(f.seen_log_ratio)),
                     pct_of_log(median(f.unseen_log_ratio))),
         fmt::format("{:.2f} / {:.2f}", rms(f.group_level), rms(f.within_group))});
    std::vector<std::string> row = {held};
    for (const char* t : {"prefill", "decode", "d1 TP + d2 PP", "c_kv", "c_step"})
      row.push_back(fmt::format("{:.0f}", 100.0 * median(f.shares.at(t))));
    for (const char* p : {"g1_p", "g1_d", "g2_d", "b_d", "k_params + k_active"})
      row.push_back(fmt::format("{:.2f}", median(f.params.at(p))));
    carried.add_row(row);
  }
  std::string groups;
  for (const auto& [held, f] : folds) {
    groups += "- " + held + ":";
    for (const auto& [key, rs] : f.by_group)
      groups += fmt::format(" {} {};", key, pct_of_log(median(rs)));
    groups += "\n";
  }
  fmt::print(
      "### Leave one parallelism out, per fold ({} seeds x 50 training rows)\n\n{}\n"
      "Share of the single fit's prediction at the held-out rows per term (median over rows and "
      "seeds) and the fitted exponents (median over seeds):\n\n{}\n"
      "Median error per (model, GPU) group, seen or new to the training rows:\n\n{}\n",
      kSeeds, errors.render_markdown(), carried.render_markdown(), groups);
  return 0;
}
