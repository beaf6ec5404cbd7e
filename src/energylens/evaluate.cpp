// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/evaluate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kareus/core/error.hpp"
#include "kareus/core/progress.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/core/table.hpp"
#include "kareus/core/wrap.hpp"
#include "kareus/energylens/descriptors.hpp"
#include "kareus/energylens/metrics.hpp"
#include "kareus/energylens/predictors.hpp"

namespace kareus::energylens {
namespace {

struct RunScore {
  std::optional<double> mape;
  double top1;
  double regret;
  double pairwise;
  double pairwise_parallelism;
  double pairwise_separated;
};

std::vector<std::unique_ptr<Predictor>> predictors(const Dataset& data, const FitOptions& fit,
                                                   std::uint64_t seed) {
  std::vector<std::unique_ptr<Predictor>> out;
  out.push_back(make_energylens(fit));
  out.push_back(make_xgboost(TreeKind::kRandomForest, fit.scale_by, seed));
  out.push_back(make_xgboost(TreeKind::kGradientBoosting, fit.scale_by, seed));
  out.push_back(make_per_batch_linear(fit.scale_by));
  if (data.has_time) out.push_back(make_latency_proxy());
  return out;
}

std::vector<Sample> pick(const Dataset& data, const std::vector<std::size_t>& rows) {
  std::vector<Sample> out;
  for (std::size_t r : rows) out.push_back(data.samples[r]);
  return out;
}

struct Predictions {
  bool energy = true;  // false for a ranking proxy
  std::vector<double> values;
};

// Every model trained on `train`, its predictions for `test` written at test's row indices of
// `out` (sized to the dataset).
void predict_split(const Dataset& data, const std::vector<std::size_t>& train,
                   const std::vector<std::size_t>& test, const FitOptions& fit, std::uint64_t seed,
                   std::map<std::string, Predictions>& out) {
  FitOptions f = fit;
  f.seed = seed;
  const std::vector<Sample> train_rows = pick(data, train), test_rows = pick(data, test);
  for (auto& p : predictors(data, f, seed)) {
    p->fit(train_rows);
    const std::vector<double> predicted = p->predict(test_rows);
    Predictions& slot = out[p->name()];
    slot.energy = p->predicts_energy();
    slot.values.resize(data.samples.size(), std::nan(""));
    for (std::size_t i = 0; i < test.size(); ++i) slot.values[test[i]] = predicted[i];
  }
}

std::map<std::string, RunScore> score_rows(const Dataset& data,
                                           const std::map<std::string, Predictions>& predictions,
                                           const std::vector<std::size_t>& rows) {
  std::vector<double> measured;
  for (std::size_t r : rows) measured.push_back(data.energy_j(r));
  std::map<std::string, RunScore> out;
  for (const auto& [name, p] : predictions) {
    std::vector<double> predicted;
    for (std::size_t r : rows) predicted.push_back(p.values[r]);
    const SelectionScore sel = selection_score(data.samples, rows, predicted);
    RunScore score{
        std::nullopt,          sel.top1, sel.regret, sel.pairwise, sel.pairwise_parallelism,
        sel.pairwise_separated};
    if (p.energy) score.mape = mape_percent(measured, predicted);
    out[name] = score;
  }
  return out;
}

std::map<std::string, RunScore> run_split(const Dataset& data,
                                          const std::vector<std::size_t>& train,
                                          const std::vector<std::size_t>& test,
                                          const FitOptions& fit, std::uint64_t seed) {
  std::map<std::string, Predictions> predictions;
  predict_split(data, train, test, fit, seed, predictions);
  return score_rows(data, predictions, test);
}

Stat stat_of(const std::vector<double>& values) {
  Stat s;
  std::vector<double> v;
  for (double x : values)
    if (std::isfinite(x)) v.push_back(x);
  s.count = v.size();
  if (v.empty()) return {std::nan(""), std::nan(""), 0};
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.std += (x - s.mean) * (x - s.mean);
  s.std = v.size() > 1 ? std::sqrt(s.std / static_cast<double>(v.size() - 1)) : 0.0;
  return s;
}

Scores summarise(const std::vector<std::map<std::string, RunScore>>& runs) {
  Scores out;
  if (runs.empty()) return out;
  for (const auto& [name, first] : runs.front()) {
    std::vector<double> mape, top1, regret, pairwise, parallelism, separated;
    for (const auto& run : runs) {
      const RunScore& r = run.at(name);
      if (r.mape) mape.push_back(*r.mape);
      top1.push_back(r.top1);
      regret.push_back(r.regret);
      pairwise.push_back(r.pairwise);
      parallelism.push_back(r.pairwise_parallelism);
      separated.push_back(r.pairwise_separated);
    }
    ModelScores m;
    if (first.mape) m.mape = stat_of(mape);
    m.top1 = stat_of(top1);
    m.regret = stat_of(regret);
    m.pairwise = stat_of(pairwise);
    m.pairwise_parallelism = stat_of(parallelism);
    m.pairwise_separated = stat_of(separated);
    out[name] = m;
  }
  return out;
}

Scores random_split_scores(const Dataset& data, std::size_t n, const EvaluateOptions& options,
                           Progress& progress, std::size_t& done) {
  std::vector<std::map<std::string, RunScore>> runs;
  for (const RandomSplit& s : evaluation_splits(data, n, options)) {
    runs.push_back(run_split(data, s.train, s.test, options.fit, s.seed));
    progress.update(++done);
  }
  return summarise(runs);
}

// `count` of `pool`'s rows chosen by the design (which reads no energy), in pick order.
std::vector<std::size_t> designed_rows(const Dataset& data, const std::vector<std::size_t>& pool,
                                       std::size_t count, const EvaluateOptions& options) {
  std::vector<std::size_t> train;
  for (const DesignPick& d : design_measurements(pick(data, pool), count, options.fit, {},
                                                 options.design_group_precision))
    train.push_back(pool[d.row]);
  return train;
}

// `count` of `pool`'s rows: drawn at random with `seed`, or by the design.
std::vector<std::size_t> choose_training(const Dataset& data, const std::vector<std::size_t>& pool,
                                         std::size_t count, const EvaluateOptions& options,
                                         std::uint64_t seed) {
  std::vector<std::size_t> train;
  if (options.design == Design::kRandom) {
    Rng split(seed);
    for (std::size_t k : split.sample_without_replacement(pool.size(), count))
      train.push_back(pool[k]);
    return train;
  }
  return designed_rows(data, pool, count, options);
}

// "parallelism" holds out one TP x PP x DP configuration: a deployment shape never measured.
std::string column_of(const Sample& s, const std::string& column) {
  if (column == "parallelism") return fmt::format("tp{} pp{} dp{}", s.tp, s.pp, s.dp);
  return column == "model" ? s.model : s.gpu;
}

std::vector<std::string> named_values(const Dataset& data, const std::string& column) {
  std::set<std::string> values;
  for (const Sample& s : data.samples) values.insert(column_of(s, column));
  return values.contains("") || values.size() < 2
             ? std::vector<std::string>{}
             : std::vector<std::string>(values.begin(), values.end());
}

LeaveOneOut leave_one_out(const Dataset& data, const std::string& column,
                          const EvaluateOptions& options, Progress& progress, std::size_t& done) {
  const std::vector<std::string> values = named_values(data, column);
  std::vector<std::size_t> all(data.samples.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  Rng rng(options.seed);
  std::vector<std::map<std::string, RunScore>> runs;
  for (int s = 0; s < options.seeds; ++s) {
    std::map<std::string, Predictions> predictions;
    for (const std::string& held : values) {
      std::vector<std::size_t> others, test;
      for (std::size_t i : all)
        (column_of(data.samples[i], column) == held ? test : others).push_back(i);
      const std::uint64_t fold_seed = rng.fork_seed();
      std::vector<std::size_t> train = choose_training(
          data, others, std::min(options.train_size, others.size()), options, fold_seed);
      predict_split(data, train, test, options.fit, fold_seed, predictions);
    }
    runs.push_back(score_rows(data, predictions, all));
    progress.update(++done);
  }
  return {column, values.size(), summarise(runs)};
}

std::optional<Extrapolation> extrapolate(const Dataset& data, const EvaluateOptions& options) {
  std::set<double> batches;
  for (const Sample& s : data.samples) batches.insert(s.batch);
  std::optional<Extrapolation> best;
  std::size_t best_score = 0;
  for (double b : batches) {
    std::vector<std::size_t> train, test;
    for (std::size_t i = 0; i < data.samples.size(); ++i) {
      const double x = data.samples[i].batch;
      if (x <= b) train.push_back(i);
      if (x >= 3.0 * b && x <= 10.0 * b) test.push_back(i);
    }
    // The split with the most rows on its smaller side, so both fit and test are meaningful.
    const std::size_t score = std::min(train.size(), test.size());
    if (train.size() < 5 || test.size() < 2 || score <= best_score) continue;
    best_score = score;
    Extrapolation e;
    e.train_max_batch = b;
    e.test_min_batch = 3.0 * b;
    e.test_max_batch = 10.0 * b;
    e.train_rows = train.size();
    e.test_rows = test.size();
    e.scores = summarise({run_split(data, train, test, options.fit, options.seed)});
    best = std::move(e);
  }
  return best;
}

// The rows a training set can be drawn from: the pool, or all but two test rows without one;
// refuses a pool share outside (0, 1), a pool or test set under two rows, and a design without
// a pool (its test rows would be the ones it did not choose).
std::size_t pool_rows(std::size_t n, const EvaluateOptions& options) {
  if (options.pool_share == 0.0) {
    if (options.design != Design::kRandom)
      throw Error::invalid(
          "", field_ref("design"), design_name(options.design),
          fmt::format("needs a pool to choose from ({} between 0 and 1)", field_ref("pool_share")));
    return n >= 2 ? n - 2 : 0;
  }
  const auto pool =
      static_cast<std::size_t>(std::lround(options.pool_share * static_cast<double>(n)));
  if (!(options.pool_share > 0.0 && options.pool_share < 1.0) || pool < 2 || pool + 2 > n)
    throw Error::invalid("", field_ref("pool_share"), format_number(options.pool_share),
                         fmt::format("must leave at least 2 rows in the pool and 2 in the test set "
                                     "of the {} rows (a share between 0 and 1)",
                                     n));
  return pool;
}

std::string cell(const std::optional<Stat>& s, double factor) {
  if (!s || s->count == 0) return "-";
  return fmt::format("{:.1f} ± {:.1f}", s->mean * factor, s->std * factor);
}

Json stat_json(const Stat& s, double factor) {
  if (s.count == 0) return Json{{"mean", nullptr}, {"std", nullptr}, {"seeds", 0}};
  return Json{{"mean", s.mean * factor}, {"std", s.std * factor}, {"seeds", s.count}};
}

Json scores_json(const Scores& scores) {
  Json out = Json::object();
  for (const auto& [name, m] : scores) {
    out[name] = Json{{"mape", m.mape ? stat_json(*m.mape, 1.0) : Json(nullptr)},
                     {"top1", stat_json(m.top1, 100.0)},
                     {"regret", stat_json(m.regret, 100.0)},
                     {"pairwise", stat_json(m.pairwise, 100.0)},
                     {"pairwise_parallelism", stat_json(m.pairwise_parallelism, 100.0)},
                     {"pairwise_separated", stat_json(m.pairwise_separated, 100.0)}};
  }
  return out;
}

std::string scores_table(const Scores& scores) {
  TextTable t({"model", "MAPE %", "Top-1 %", "regret %", "pairwise %", "pairwise TP/PP/DP %",
               fmt::format("pairwise > {:g} % apart %", 100 * kSeparation)});
  for (const auto& [name, m] : scores)
    t.add_row({name, cell(m.mape, 1.0), cell(m.top1, 100.0), cell(m.regret, 100.0),
               cell(m.pairwise, 100.0), cell(m.pairwise_parallelism, 100.0),
               cell(m.pairwise_separated, 100.0)});
  return t.render_markdown();
}

}  // namespace

EvaluationReport evaluate(const Dataset& data, const EvaluateOptions& options) {
  const std::size_t n = data.samples.size();
  const std::size_t trainable = pool_rows(n, options);
  if (options.train_size < 2 || options.train_size > trainable)
    throw Error::invalid(
        data.source, field_ref("train_size"), std::to_string(options.train_size),
        fmt::format("must be between 2 and {} ({})", std::max<std::size_t>(trainable, 2),
                    options.pool_share > 0.0 ? "the pool's rows" : "rows - 2"));
  if (options.seeds < 1)
    throw Error::invalid("", field_ref("seeds"), std::to_string(options.seeds), "must be >= 1");
  // Every row's descriptors before any fit, so that a row the catalogues cannot describe stops
  // the run before it prints anything.
  if (options.fit.descriptors) require_descriptors(data);
  EvaluationReport report;
  report.source = data.source;
  report.rows = n;
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  report.scenarios = scenario_groups(data.samples, all).size();
  report.train_size = options.train_size;
  report.seeds = options.seeds;
  report.pool_share = options.pool_share;
  report.design = options.design;

  std::vector<std::size_t> sizes;
  for (std::size_t s : options.curve_sizes)
    if (s >= 2 && s <= trainable) sizes.push_back(s);
  std::vector<std::string> columns;
  for (const char* column : {"model", "gpu", "parallelism"})
    if (!named_values(data, column).empty()) columns.push_back(column);
  // A curve size equal to the training size reuses the random splits: no work of its own.
  const auto fresh_sizes = static_cast<std::size_t>(std::count_if(
      sizes.begin(), sizes.end(), [&](std::size_t s) { return s != options.train_size; }));
  Progress progress("energylens evaluate",
                    static_cast<std::size_t>(options.seeds) * (1 + fresh_sizes + columns.size()),
                    options.progress);
  std::size_t done = 0;
  report.scores = random_split_scores(data, options.train_size, options, progress, done);
  for (std::size_t s : sizes)
    report.curve.emplace_back(s, s == options.train_size
                                     ? report.scores
                                     : random_split_scores(data, s, options, progress, done));
  report.extrapolation = extrapolate(data, options);
  for (const std::string& column : columns)
    report.leave_one_out.push_back(leave_one_out(data, column, options, progress, done));
  progress.finish();
  return report;
}

Json EvaluationReport::to_json() const {
  Json curve_json = Json::array();
  for (const auto& [size, s] : curve)
    curve_json.push_back({{"train_size", size}, {"models", scores_json(s)}});
  Json extra = nullptr;
  if (extrapolation)
    extra = Json{{"train_max_batch", extrapolation->train_max_batch},
                 {"test_min_batch", extrapolation->test_min_batch},
                 {"test_max_batch", extrapolation->test_max_batch},
                 {"train_rows", extrapolation->train_rows},
                 {"test_rows", extrapolation->test_rows},
                 {"models", scores_json(extrapolation->scores)}};
  Json held_out = Json::object();
  for (const LeaveOneOut& l : leave_one_out)
    held_out[l.column] = Json{{"folds", l.folds}, {"models", scores_json(l.scores)}};
  return Json{
      {"source", source},
      {"rows", rows},
      {"scenarios", scenarios},
      {"train_size", train_size},
      {"seeds", seeds},
      {"pool_share", pool_share},
      {"design", design_name(design)},
      {"units",
       {{"mape", "percent"}, {"top1", "percent"}, {"regret", "percent"}, {"pairwise", "percent"}}},
      {"models", scores_json(scores)},
      {"sample_efficiency", curve_json},
      {"extrapolation", extra},
      {"leave_one_out", held_out}};
}

std::string EvaluationReport::to_markdown() const {
  const std::string protocol =
      pool_share > 0.0
          ? fmt::format("split {:g} % pool / {:g} % test, train on {} pool rows chosen {}",
                        100 * pool_share, 100 * (1 - pool_share), train_size,
                        design == Design::kRandom ? "at random" : "by the d-optimal design")
          : fmt::format("train on {} random rows, test on the rest", train_size);
  // Paragraphs are wrapped so that the markdown reads on a terminal too (kLineWidth).
  std::string out =
      wrap(fmt::format("{}: {} rows, {} scenarios; {}, {} seeds (mean ± std over seeds)", source,
                       rows, scenarios, protocol, seeds)) +
      "\n" + scores_table(scores);
  if (!curve.empty()) {
    TextTable t({"train rows", "model", "MAPE %", "Top-1 %", "pairwise %"});
    const auto mean = [](const Stat& s, double unit) {
      return s.count ? fmt::format("{:.1f}", unit * s.mean) : std::string("-");
    };
    for (const auto& [size, s] : curve)
      for (const auto& [name, m] : s)
        t.add_row({std::to_string(size), name, m.mape ? mean(*m.mape, 1.0) : "-",
                   mean(m.top1, 100.0), mean(m.pairwise, 100.0)});
    out += "\nSample efficiency (means over seeds):\n\n" + t.render_markdown();
  }
  if (extrapolation)
    out +=
        "\n" +
        wrap(fmt::format("Extrapolation: train on batch <= {} ({} rows), test on batch {}..{} "
                         "({} rows):",
                         format_number(extrapolation->train_max_batch), extrapolation->train_rows,
                         format_number(extrapolation->test_min_batch),
                         format_number(extrapolation->test_max_batch), extrapolation->test_rows)) +
        "\n" + scores_table(extrapolation->scores);
  else
    out += "\nExtrapolation: no batch range with 3-10x larger held-out batches.\n";
  for (const LeaveOneOut& l : leave_one_out)
    out += "\n" +
           wrap(fmt::format("Leave one {0} out ({1} folds; train on {2} {3} rows of the other "
                            "{0}s, score every row by the fold that held it out):",
                            l.column, l.folds, train_size,
                            design == Design::kRandom ? "random" : "designed")) +
           "\n" + scores_table(l.scores);
  return out;
}

namespace {

// One split per seed: the rows in the seed's random order, the first `kept` of them handed to
// `choose` for the training rows, the rest the test rows (sorted).
template <class Choose>
std::vector<RandomSplit> seeded_splits(std::size_t rows, std::size_t kept,
                                       const EvaluateOptions& options, Choose choose) {
  Rng rng(options.seed);
  std::vector<RandomSplit> splits;
  for (int s = 0; s < options.seeds; ++s) {
    RandomSplit& split = splits.emplace_back();
    split.seed = rng.fork_seed();
    Rng draw(split.seed);
    const std::vector<std::size_t> order = draw.sample_without_replacement(rows, rows);
    split.train =
        choose(std::vector<std::size_t>(order.begin(), order.begin() + static_cast<long>(kept)));
    split.test.assign(order.begin() + static_cast<long>(kept), order.end());
    std::sort(split.test.begin(), split.test.end());
  }
  return splits;
}

}  // namespace

std::vector<RandomSplit> random_splits(std::size_t rows, std::size_t train_size,
                                       const EvaluateOptions& options) {
  return seeded_splits(rows, train_size, options,
                       [](std::vector<std::size_t> train) { return train; });
}

std::vector<RandomSplit> evaluation_splits(const Dataset& data, std::size_t train_size,
                                           const EvaluateOptions& options) {
  const std::size_t rows = data.samples.size();
  const std::size_t pool_size = pool_rows(rows, options);
  if (options.pool_share == 0.0) return random_splits(rows, train_size, options);
  return seeded_splits(rows, pool_size, options, [&](const std::vector<std::size_t>& pool) {
    if (options.design == Design::kRandom)
      return std::vector<std::size_t>(pool.begin(), pool.begin() + static_cast<long>(train_size));
    return designed_rows(data, pool, train_size, options);
  });
}

}  // namespace kareus::energylens
