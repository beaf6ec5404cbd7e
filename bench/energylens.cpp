// SPDX-License-Identifier: Apache-2.0
// Quality benchmark: EnergyLens against its baselines on the shipped real datasets
// (data/energylens), beside the figures the EnergyLens paper reports on its own, unreleased data
// (Palladino et al., arXiv 2605.10556). Prints markdown for docs/benchmarks/energylens.md.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <set>
#include <string>

#include "energylens_design.hpp"
#include "energylens_misses.hpp"
#include "energylens_shapes.hpp"
#include "kareus/core/paths.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/core/table.hpp"
#include "kareus/energylens/bootstrap.hpp"
#include "kareus/energylens/evaluate.hpp"
#include "kareus/energylens/fit.hpp"
#include "kareus/energylens/import.hpp"
#include "kareus/energylens/metrics.hpp"
#include "kareus/energylens/select.hpp"

namespace el = kareus::energylens;

namespace {

struct Source {
  std::string name;
  el::ImportFormat format;
  std::string path;
};

// Measured extra energy of the latency-optimal configuration over the energy-optimal one, over
// scenarios with at least two configurations: mean and maximum, in percent.
std::pair<double, double> latency_penalty(const el::Dataset& d) {
  std::vector<std::size_t> all(d.samples.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  double sum = 0.0, worst = 0.0;
  std::size_t n = 0;
  for (const auto& g : el::scenario_groups(d.samples, all)) {
    if (g.size() < 2) continue;
    double best = std::numeric_limits<double>::infinity();
    std::size_t fastest = g.front();
    for (std::size_t r : g) {
      best = std::min(best, d.energy_j(r));
      if (*d.samples[r].time < *d.samples[fastest].time) fastest = r;
    }
    const double penalty = 100.0 * (d.energy_j(fastest) / best - 1.0);
    sum += penalty;
    worst = std::max(worst, penalty);
    ++n;
  }
  return {n ? sum / static_cast<double>(n) : 0.0, worst};
}

// Share of held-out rows inside their 90 % interval, over `seeds` random 50-row training sets
// (the evaluation's protocol), in percent; with `replicates` > 0 the intervals include the
// bootstrap spread of the parameters.
double interval_coverage(const el::Dataset& d, const el::FitOptions& fit, int seeds,
                         int replicates) {
  kareus::Rng rng(1);
  std::size_t inside = 0, total = 0;
  for (int s = 0; s < seeds; ++s) {
    std::vector<std::size_t> order =
        rng.sample_without_replacement(d.samples.size(), d.samples.size());
    std::vector<el::Sample> train;
    for (std::size_t i = 0; i < 50; ++i) train.push_back(d.samples[order[i]]);
    const el::EnergyModel m = replicates > 0 ? el::fit_with_bootstrap(train, fit, {replicates, 1})
                                             : el::fit_energy_model(train, fit);
    for (std::size_t i = 50; i < order.size(); ++i) {
      const el::Sample& row = d.samples[order[i]];
      const el::Interval iv = m.interval(row);
      inside += iv.low <= *row.energy && *row.energy <= iv.high;
      ++total;
    }
  }
  return 100.0 * static_cast<double>(inside) / static_cast<double>(total);
}

double cpu_seconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

// select on held-out candidates: scenarios with two or more, those it calls too close, the
// (best, other) pairs it calls apart and how many of them the measurements order the same way.
struct Ties {
  std::size_t scenarios = 0, too_close = 0, apart = 0, apart_in_order = 0;
  double cpu_s = 0.0;

  void add(const el::EnergyModel& m, const el::Dataset& candidates) {
    const double start = cpu_seconds();
    const std::vector<el::Selection> selections = el::select_configurations(m, candidates);
    cpu_s += cpu_seconds() - start;
    for (const el::Selection& sel : selections) {
      if (sel.ranking.size() < 2) continue;
      ++scenarios;
      too_close += sel.too_close_to_call;
      const double best = candidates.energy_j(sel.ranking.front().row);
      for (std::size_t k = 1; k < sel.ranking.size(); ++k) {
        if (sel.ranking[k].close_to_best) continue;
        ++apart;
        apart_in_order += best <= candidates.energy_j(sel.ranking[k].row);
      }
    }
  }
};

// The calibrated intervals split by the row's scale group: with training rows ([0], the
// calibrated multiplier) or without ([1], which keeps the normal one).
struct GroupCoverage {
  std::array<std::size_t, 2> rows{}, inside{};
  std::array<double, 2> width{};

  std::string cell(std::size_t seen) const {
    const double n = static_cast<double>(std::max<std::size_t>(rows[seen], 1));
    return rows[seen] ? fmt::format("{:.1f} ({:.3f})",
                                    100.0 * static_cast<double>(inside[seen]) / n, width[seen] / n)
                      : "-";
  }
};

// Held-out rows inside their interval and the intervals' mean half-width (log energy), for the
// bag's calibrated intervals and, on the same models, for its normal ones (interval_z(): the
// intervals before the calibration).
struct Coverage {
  std::size_t rows = 0;
  std::size_t inside = 0, normal_inside = 0;
  double width = 0.0, normal_width = 0.0;
  GroupCoverage groups;
  // select on the model without and with its calibration (the tie rule ignores the intervals).
  std::array<Ties, 2> ties;

  void add(const el::EnergyModel& m, const std::vector<el::Sample>& test) {
    el::EnergyModel normal = m;
    normal.calibration = {};
    for (const el::Sample& row : test) {
      const el::Interval iv = m.interval(row), nv = normal.interval(row);
      const bool in = iv.low <= *row.energy && *row.energy <= iv.high;
      const double half = 0.5 * std::log(iv.high / iv.low);
      inside += in;
      normal_inside += nv.low <= *row.energy && *row.energy <= nv.high;
      width += half;
      normal_width += 0.5 * std::log(nv.high / nv.low);
      ++rows;
      const std::size_t g = m.scales.contains(el::scale_group_key(row, m.scale_by)) ? 0 : 1;
      ++groups.rows[g];
      groups.inside[g] += in;
      groups.width[g] += half;
    }
    el::Dataset candidates;
    candidates.samples = test;
    ties[0].add(normal, candidates);
    ties[1].add(m, candidates);
  }
  std::vector<std::string> cells() const {
    const double n = static_cast<double>(rows);
    auto both = [&](auto cell) { return fmt::format("{} -> {}", cell(ties[0]), cell(ties[1])); };
    return {std::to_string(rows),
            fmt::format("{:.1f} -> {:.1f}", 100.0 * static_cast<double>(normal_inside) / n,
                        100.0 * static_cast<double>(inside) / n),
            fmt::format("{:.3f} -> {:.3f}", normal_width / n, width / n),
            fmt::format("{} -> {} / {}", ties[0].too_close, ties[1].too_close, ties[0].scenarios),
            both([](const Ties& t) { return std::to_string(t.apart); }),
            both([](const Ties& t) {
              return fmt::format("{:.1f}",
                                 100.0 * static_cast<double>(t.apart_in_order) /
                                     static_cast<double>(std::max<std::size_t>(t.apart, 1)));
            }),
            both([](const Ties& t) { return fmt::format("{:.2f}", t.cpu_s); }),
            fmt::format("{:.0f}", 100.0 * static_cast<double>(groups.rows[0]) / n),
            groups.cell(0),
            groups.cell(1)};
  }
};

std::vector<el::Sample> rows_of(const el::Dataset& d, const std::vector<std::size_t>& rows) {
  std::vector<el::Sample> out;
  for (std::size_t r : rows) out.push_back(d.samples[r]);
  return out;
}

// The evaluation's protocols: 50 random training rows and the rest held out; and each model, GPU
// or parallel configuration held out in turn, trained on 50 random rows of the others.
void calibration_rows(const std::string& name, const el::Dataset& d, const el::FitOptions& fit,
                      int seeds, kareus::TextTable& table) {
  kareus::Rng rng(1);
  Coverage random;
  for (int s = 0; s < seeds; ++s) {
    const std::vector<std::size_t> order =
        rng.sample_without_replacement(d.samples.size(), d.samples.size());
    const std::vector<std::size_t> train(order.begin(), order.begin() + 50),
        test(order.begin() + 50, order.end());
    el::FitOptions f = fit;
    f.seed = rng.fork_seed();
    random.add(el::fit_energy_model(rows_of(d, train), f), rows_of(d, test));
  }
  std::vector<std::string> row = {name, "random split"};
  for (const std::string& c : random.cells()) row.push_back(c);
  table.add_row(row);
  for (const std::string column : {"model", "gpu", "parallelism"}) {
    auto value = [&](const el::Sample& x) {
      return column == "parallelism" ? fmt::format("tp{} pp{} dp{}", x.tp, x.pp, x.dp)
             : column == "model"     ? x.model
                                     : x.gpu;
    };
    std::set<std::string> values;
    for (const el::Sample& x : d.samples) values.insert(value(x));
    if (values.size() < 2 || values.contains("")) continue;
    Coverage held;
    for (int s = 0; s < seeds; ++s)
      for (const std::string& v : values) {
        std::vector<std::size_t> others, test;
        for (std::size_t i = 0; i < d.samples.size(); ++i)
          (value(d.samples[i]) == v ? test : others).push_back(i);
        std::vector<std::size_t> train;
        for (std::size_t k : rng.sample_without_replacement(
                 others.size(), std::min<std::size_t>(50, others.size())))
          train.push_back(others[k]);
        el::FitOptions f = fit;
        f.seed = rng.fork_seed();
        held.add(el::fit_energy_model(rows_of(d, train), f), rows_of(d, test));
      }
    row = {name, "leave one " + column + " out"};
    for (const std::string& c : held.cells()) row.push_back(c);
    table.add_row(row);
  }
}

constexpr int kReplicates = 20;

std::string pct(const std::optional<el::Stat>& s) {
  return s && s->count ? fmt::format("{:.1f} ± {:.1f}", s->mean, s->std) : "-";
}
std::string pct100(const el::Stat& s) {
  return s.count ? fmt::format("{:.1f} ± {:.1f}", 100 * s.mean, 100 * s.std) : "-";
}

}  // namespace

// With --intervals, only the calibration table (the rest takes several minutes more); with
// --misses, only where the random split's separated pairs are ordered wrong
// (energylens_misses.hpp); with --shapes, only the fitted shape parameters (energylens_shapes.hpp);
// with --design [group precision], only random against designed training rows
// (energylens_design.hpp).
int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  const bool intervals_only = only == "--intervals";
  // --design's optional second argument: the design's prior precision on the group multipliers.
  const double group_precision =
      only == "--design" && argc > 2 ? std::stod(argv[2]) : el::kDesignRidge;
  const auto dir = kareus::data_dir() / "energylens";
  const std::vector<Source> sources = {
      {"ML.ENERGY leaderboard v2 (A100/H100, vLLM, batch x TP x PP)", el::ImportFormat::kMlenergyV2,
       "mlenergy-v2/mlenergy_v2_llm_configs.csv"},
      {"TokenPowerBench (H100 NVL, batch x output length)", el::ImportFormat::kTokenpowerbench,
       "tokenpowerbench/tokenpowerbench_upstream_runs.csv"}};

  kareus::TextTable summary({"dataset", "model", "MAPE % (n=50)", "Top-1 %", "regret %",
                             "pairwise %",
                             fmt::format("pairwise > {:g} % apart %", 100 * el::kSeparation)});
  summary.add_row(
      {"paper (940 scenarios, not released)", "EnergyLens", "13.0", "88.2", "-", "95.8", "-"});
  summary.add_row({"paper", "closest analytical baseline", "-", "60.9", "-", "91.5", "-"});
  summary.add_row({"paper", "random forest", "49.0", "-", "-", "-", "-"});
  kareus::TextTable transfer(
      {"dataset", "held out", "folds", "model", "MAPE %", "Top-1 %", "pairwise %"});
  kareus::TextTable calibration(
      {"dataset", "protocol", "held-out rows", "coverage % (normal -> calibrated)",
       "mean half-width, log (normal -> calibrated)", "select: too close / scenarios",
       "pairs called apart", "% of them in measured order", "select CPU s",
       "rows in training groups %", "training groups: coverage % (half-width)",
       "new groups: coverage % (half-width)"});
  std::string details;
  for (const Source& s : sources) {
    el::ImportResult imported = el::import_dataset(s.format, dir / s.path);
    imported.data.source = "data/energylens/" + s.path;
    el::EvaluateOptions o;
    o.progress = false;
    o.fit.descriptors = true;
    o.fit.bags = el::kDefaultBags;
    if (only == "--shapes") {
      std::printf("### %s: shape parameters (random split)\n\n%s\n", s.name.c_str(),
                  shapes::table(imported.data, o).c_str());
      continue;
    }
    if (only == "--design") {
      std::printf(
          "### %s: 50 training rows chosen at random or by the design from a %g %% pool, "
          "tested on the rest (10 seeds per seed set)\n\n%s\n",
          s.name.c_str(), 100 * design::kPoolShare,
          design::table(imported.data, o, group_precision).c_str());
      continue;
    }
    if (only == "--misses") {
      std::printf("### %s: separated pairs ordered wrong (random split)\n\n%s\n", s.name.c_str(),
                  misses::diagnose(imported.data, o).c_str());
      continue;
    }
    calibration_rows(s.name, imported.data, o.fit, o.seeds, calibration);
    if (intervals_only) continue;
    const el::EvaluationReport r = el::evaluate(imported.data, o);
    for (const auto& [name, m] : r.scores)
      summary.add_row({s.name, name, pct(m.mape), pct100(m.top1), pct100(m.regret),
                       pct100(m.pairwise), pct100(m.pairwise_separated)});
    for (const el::LeaveOneOut& l : r.leave_one_out)
      for (const auto& [name, m] : l.scores)
        transfer.add_row({s.name, l.column, std::to_string(l.folds), name, pct(m.mape),
                          pct100(m.top1), pct100(m.pairwise)});
    const auto [mean_penalty, max_penalty] = latency_penalty(imported.data);
    details += fmt::format(
        "### {}\n\n{}\n\nMeasured energy of the latency-optimal configuration over the "
        "energy-optimal one: mean +{:.1f} %, worst +{:.1f} % (paper: up to +79.8 %).\n\n"
        "EnergyLens {:.0f} % intervals held {:.1f} % of held-out rows (50 training rows, 10 "
        "seeds); with a {}-replicate bootstrap of the parameters, {:.1f} %.\n\n",
        s.name, r.to_markdown(), mean_penalty, max_penalty, 100 * el::kIntervalCoverage,
        interval_coverage(imported.data, o.fit, o.seeds, 0), kReplicates,
        interval_coverage(imported.data, o.fit, o.seeds, kReplicates));
  }
  if (only == "--misses" || only == "--shapes" || only == "--design") return 0;
  const std::string intervals =
      fmt::format("## Interval calibration (bag of {}, 50 training rows, 10 seeds)\n\n{}\n",
                  el::kDefaultBags, calibration.render_markdown());
  if (intervals_only) {
    std::printf("%s", intervals.c_str());
    return 0;
  }
  std::printf(
      "## EnergyLens on real measurements (train 50 random rows, 10 seeds)\n\n%s\n"
      "## Transfer to an unmeasured model, GPU or parallel configuration (50 training rows from "
      "the others, 10 seeds)"
      "\n\n%s\n%s%s",
      summary.render_markdown().c_str(), transfer.render_markdown().c_str(), details.c_str(),
      intervals.c_str());
  return 0;
}
