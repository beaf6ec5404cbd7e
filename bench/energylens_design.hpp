// SPDX-License-Identifier: Apache-2.0
// bench_energylens --design: which 50 rows to measure. Each seed
// splits the rows into a pool (kPoolShare) and a test set; EnergyLens is trained on 50 pool rows
// chosen at random or by the D-optimal design (design.hpp, which reads no energy) and both are
// scored on the same test rows, for three seed sets.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "kareus/core/table.hpp"
#include "kareus/energylens/evaluate.hpp"
#include "kareus/energylens/fit.hpp"
#include "kareus/energylens/metrics.hpp"

namespace design {

namespace el = kareus::energylens;

// The pool `kareus energylens evaluate --design d-optimal` defaults to.
inline constexpr double kPoolShare = 0.7;

struct Summary {
  std::vector<double> mape, top1, pairwise, regret, pairs, groups;
};

inline std::string mean_sd(const std::vector<double>& v, double factor) {
  double mean = 0.0, ss = 0.0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) ss += (x - mean) * (x - mean);
  const double sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
  return fmt::format("{:.1f} ± {:.1f}", factor * mean, factor * sd);
}

// Training rows' pairs within one scenario (what the shape's ranking is learnt from) and scale
// groups covered.
inline void add_coverage(const el::Dataset& d, const std::vector<std::size_t>& train,
                         const el::FitOptions& fit, Summary& s) {
  double pairs = 0.0;
  for (const auto& g : el::scenario_groups(d.samples, train))
    pairs += static_cast<double>(g.size() * (g.size() - 1) / 2);
  std::set<std::string> groups;
  for (std::size_t r : train) groups.insert(el::scale_group_key(d.samples[r], fit.scale_by));
  s.pairs.push_back(pairs);
  s.groups.push_back(static_cast<double>(groups.size()));
}

inline Summary run(const el::Dataset& d, el::EvaluateOptions o) {
  Summary s;
  for (const el::RandomSplit& split : el::evaluation_splits(d, o.train_size, o)) {
    std::vector<el::Sample> train;
    for (std::size_t i : split.train) train.push_back(d.samples[i]);
    el::FitOptions f = o.fit;
    f.seed = split.seed;
    const el::EnergyModel m = el::fit_energy_model(train, f);
    std::vector<double> measured, predicted;
    for (std::size_t i : split.test) {
      measured.push_back(d.energy_j(i));
      predicted.push_back(m.predict(d.samples[i]).value());
    }
    const el::SelectionScore sel = el::selection_score(d.samples, split.test, predicted);
    s.mape.push_back(el::mape_percent(measured, predicted));
    s.top1.push_back(sel.top1);
    s.pairwise.push_back(sel.pairwise);
    s.regret.push_back(sel.regret);
    add_coverage(d, split.train, f, s);
  }
  return s;
}

inline std::vector<double> minus(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out;
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back(a[i] - b[i]);
  return out;
}

// Rows: seed set x design, on the same pool and test rows per seed, then the designed minus the
// random rows' scores seed by seed (paired: the test rows are the same). `group_precision`:
// design_measurements'.
inline std::string table(const el::Dataset& d, const el::EvaluateOptions& base,
                         double group_precision) {
  kareus::TextTable t({"seed set", "training rows", "MAPE %", "Top-1 %", "pairwise %", "regret %",
                       "within-scenario pairs", "scale groups"});
  for (std::uint64_t seed : {1, 2, 3}) {
    std::vector<Summary> both;
    for (el::Design design : {el::Design::kRandom, el::Design::kDOptimal}) {
      el::EvaluateOptions o = base;
      o.seed = seed;
      o.pool_share = kPoolShare;
      o.design = design;
      o.design_group_precision = group_precision;
      const Summary& s = both.emplace_back(run(d, o));
      t.add_row({std::to_string(seed), std::string(el::design_name(design)), mean_sd(s.mape, 1.0),
                 mean_sd(s.top1, 100.0), mean_sd(s.pairwise, 100.0), mean_sd(s.regret, 100.0),
                 mean_sd(s.pairs, 1.0), mean_sd(s.groups, 1.0)});
    }
    const Summary& r = both[0];
    const Summary& g = both[1];
    t.add_row({std::to_string(seed), "d-optimal - random, paired",
               mean_sd(minus(g.mape, r.mape), 1.0), mean_sd(minus(g.top1, r.top1), 100.0),
               mean_sd(minus(g.pairwise, r.pairwise), 100.0),
               mean_sd(minus(g.regret, r.regret), 100.0), mean_sd(minus(g.pairs, r.pairs), 1.0),
               mean_sd(minus(g.groups, r.groups), 1.0)});
  }
  return t.render_markdown();
}

}  // namespace design
