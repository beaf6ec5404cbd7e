// SPDX-License-Identifier: Apache-2.0
// kareus energylens {import,fit,predict,select,design,evaluate,discover}: the EnergyLens inference
// energy model (docs/energylens.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "commands.hpp"
#include "deprecated_alias.hpp"
#include "energylens_memory.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/output_set.hpp"
#include "kareus/core/printable.hpp"
#include "kareus/core/progress.hpp"
#include "kareus/core/table.hpp"
#include "kareus/core/wrap.hpp"
#include "kareus/energylens/bootstrap.hpp"
#include "kareus/energylens/closed_form.hpp"
#include "kareus/energylens/design.hpp"
#include "kareus/energylens/evaluate.hpp"
#include "kareus/energylens/fit.hpp"
#include "kareus/energylens/import.hpp"
#include "kareus/energylens/metrics.hpp"
#include "kareus/energylens/select.hpp"
#include "kareus/energylens/symbolic.hpp"
#include "kareus/energylens/term_shares.hpp"

namespace kareus::cli {
namespace {

namespace el = kareus::energylens;

void emit(const std::string& text) {
  std::fputs(text.c_str(), stdout);
}

// The library refuses a raw public dataset given for the canonical CSV; the command line names the
// command that converts it.
el::Dataset read_data(const std::filesystem::path& path,
                      el::EnergyColumn energy = el::EnergyColumn::kRequired) {
  const CsvTable table = CsvTable::read_file(path);
  if (const auto raw = el::raw_format_of(table))
    throw Error(
        fmt::format("{}: a raw {} dataset, not the canonical EnergyLens CSV: convert it "
                    "first with `kareus energylens import --format {} {} OUT.csv` and "
                    "give OUT.csv",
                    table.source(), el::to_string(*raw), el::to_string(*raw), table.source()));
  return el::dataset_of(table, energy);
}

// The options of the fit that `fit` and `evaluate` take; `design` takes the descriptors alone
// (add_descriptors), the only one that changes which parameters a fit moves.
struct FitArgs {
  int restarts = 8;
  std::uint64_t seed = 1;
  std::string descriptors = "on";
  int bags = el::kDefaultBags;

  void add(CLI::App* cmd) {
    cmd->add_option("--restarts", restarts, "L-BFGS-B starts (first fixed, others seeded)");
    cmd->add_option("--seed", seed, "seed of the random starts and splits");
    add_descriptors(cmd);
    cmd->add_option("--bags", bags,
                    "predict with the median of this many fits: the fit to all rows and "
                    "bags - 1 fits to bootstrap resamples of them (seeded by --seed); 1: the "
                    "single fit");
  }
  void add_descriptors(CLI::App* cmd) {
    cmd->add_option("--descriptors", descriptors,
                    "on: explain the group multipliers by model and GPU descriptors "
                    "(data/models, data/gpus), so unseen pairs are predicted from them; off: "
                    "unseen groups get the geometric-mean multiplier (for models or GPUs the "
                    "catalogues do not know)")
        ->check(CLI::IsMember({"on", "off"}));
  }
  el::FitOptions options() const {
    el::FitOptions o;
    o.restarts = restarts;
    o.seed = seed;
    o.descriptors = descriptors == "on";
    o.bags = bags;
    return o;
  }
};

void add_import(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("import", "Convert a public dataset to the canonical CSV");
  auto format = std::make_shared<std::string>();
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--format", *format, "mlenergy-v2 or tokenpowerbench")->required();
  cmd->add_option("IN", *in, "the dataset's flattened CSV")->required();
  cmd->add_option("OUT", *out, "canonical CSV to write")->required();
  cmd->add_flag("--json", *json, "print one JSON document");
  cmd->callback([=] {
    check_output_file(*out, "command line", "OUT");
    const el::ImportResult r = el::import_dataset(el::parse_import_format(*format), *in);
    write_file_atomically(*out, el::dataset_to_csv(r.data));
    if (*json) {
      emit(Json{{"input", *in},
                {"output", *out},
                {"rows_read", r.rows_read},
                {"rows_written", r.data.samples.size()},
                {"notes", r.notes}}
               .dump(2) +
           "\n");
      return;
    }
    std::string text = wrap(fmt::format("{}: {} rows read, {} rows written to {}", *in, r.rows_read,
                                        r.data.samples.size(), *out));
    for (const auto& n : r.notes) text += wrap(printable(n), kLineWidth, "  - ", "    ");
    emit(text);
  });
}

// Shape parameters of a term the rows leave at next to nothing are not identified: their values
// and intervals are whatever the optimiser stopped at, and the table says so (term_shares.hpp).
Json params_json(const el::EnergyModel& m, const std::vector<el::Sample>& rows) {
  const std::vector<el::ParamInterval> iv = el::parameter_intervals(m);
  const el::TermShares shares = el::term_shares(m, rows);
  Json out = Json::array();
  for (std::size_t k = 0; k < el::kParams; ++k) {
    const auto& info = el::parameter_info()[k];
    out.push_back({{"name", info.name},
                   {"value", m.params[k]},
                   {"identified", shares.identified[k]},
                   {"meaning", info.meaning}});
    if (info.linear) out.back()["energy_share"] = shares.mean_share[k];
    if (!iv.empty()) out.back()["interval"] = Json{{"low", iv[k].low}, {"high", iv[k].high}};
  }
  return out;
}

std::string params_text(const el::EnergyModel& m, const std::vector<el::Sample>& rows) {
  const std::vector<el::ParamInterval> iv = el::parameter_intervals(m);
  const el::TermShares shares = el::term_shares(m, rows);
  std::vector<std::string> header = {"parameter", "value"};
  if (!iv.empty()) header.push_back(fmt::format("bootstrap {:.0f} %", 100 * el::kIntervalCoverage));
  header.insert(header.end(), {"energy share", "meaning"});
  TextTable t(header);
  bool any_unidentified = false;
  for (std::size_t k = 0; k < el::kParams; ++k) {
    const auto& info = el::parameter_info()[k];
    std::vector<std::string> row = {std::string(info.name), fmt::format("{:.6g}", m.params[k])};
    if (!iv.empty()) row.push_back(fmt::format("[{:.4g}, {:.4g}]", iv[k].low, iv[k].high));
    if (info.linear)
      row.push_back(fmt::format("{:.1f} %", 100 * shares.mean_share[k]));
    else
      row.push_back(shares.identified[k] ? "" : "not identified");
    any_unidentified = any_unidentified || !shares.identified[k];
    row.push_back(std::string(info.meaning));
    t.add_row(row);
  }
  std::string text =
      t.render() + "energy share: the term's part of a training row's energy, mean over the rows\n";
  if (any_unidentified)
    text +=
        wrap(fmt::format("not identified: every term it shapes carries under {:.1f} % of each "
                         "row's energy (tau_r: no row was metered from its run's start), so "
                         "the rows leave its value free",
                         100 * el::kMinIdentifiedShare));
  return text;
}

void add_fit(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "fit", "Fit the closed form (the paper's 12 parameters and ours) with L-BFGS-B");
  auto data = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto fit = std::make_shared<FitArgs>();
  auto bootstrap = std::make_shared<int>(0);
  cmd->add_option("--data", *data, "canonical CSV")->required();
  cmd->add_option("--out", *out, "write the fitted model (JSON) here");
  cmd->add_flag("--json", *json, "print one JSON document");
  cmd->add_option("--bootstrap", *bootstrap,
                  "refit on this many resamples of the rows (seeded by --seed): parameter "
                  "intervals, and predict/select intervals that include the parameters' "
                  "uncertainty; 0: off");
  fit->add(cmd);
  cmd->callback([=] {
    if (!out->empty()) check_output_file(*out, "command line", "--out");
    const el::Dataset d = read_data(*data);
    if (fit->options().descriptors) el::require_descriptors(d);
    const el::EnergyModel m =
        *bootstrap == 0
            ? el::fit_energy_model(d.samples, fit->options())
            : el::fit_with_bootstrap(d.samples, fit->options(), {*bootstrap, fit->options().seed});
    std::vector<double> measured, predicted;
    for (const auto& s : d.samples) {
      measured.push_back(s.energy->value());
      predicted.push_back(m.predict(s).value());
    }
    const double mape = el::mape_percent(measured, predicted);
    if (!out->empty()) write_file_atomically(*out, m.to_json().dump(2) + "\n");
    if (*json) {
      Json j = m.to_json();
      j["parameters"] = params_json(m, d.samples);
      j["train_mape_percent"] = mape;
      j["input_tokens_reported"] = d.has_input_tokens;
      emit(j.dump(2) + "\n");
      return;
    }
    std::string text =
        wrap(fmt::format("fitted on {} rows ({} scale groups), training MAPE {:.1f} %{}",
                         d.samples.size(), m.scales.size(), mape,
                         m.bags > 1 ? fmt::format(" (median of {} fits)", m.bags) : "")) +
        params_text(m, d.samples);
    if (!d.has_input_tokens)
      text += "input tokens not reported: a_p is J per request, absorbing the mean prompt length\n";
    if (m.descriptors) {
      TextTable t({"scale term", "value", "meaning"});
      for (std::size_t j = 0; j < m.scale_exponents.size(); ++j)
        t.add_row({std::string(el::scale_term_name(j)), fmt::format("{:.4g}", m.scale_exponents[j]),
                   std::string(el::scale_term_meaning(j))});
      text += t.render();
    }
    if (!m.scale_fit.workloads.empty()) {
      TextTable t({"workload", "scale factor"});
      for (std::size_t w = 0; w < m.scale_fit.workloads.size(); ++w)
        t.add_row({m.scale_fit.workloads[w],
                   fmt::format("{:.4g}", std::exp(m.scale_fit.workload_effects[w]))});
      text += t.render();
      text += fmt::format("a workload not listed: factor 1, log sd {:.3f} more\n",
                          std::sqrt(m.scale_fit.workload_variance));
    }
    text += fmt::format(
        "log-normal noise: row sd {:.3f}, unexplained group sd {:.3f} (intervals: {:.0f} %)\n",
        std::sqrt(m.scale_fit.row_variance), std::sqrt(m.scale_fit.group_variance),
        100 * el::kIntervalCoverage);
    if (m.calibration.calibrated())
      text += fmt::format(
          "intervals of training groups: {:.3f} sd (calibrated on {} out-of-bag rows; "
          "new groups: {:.3f})\n",
          m.calibration.multiplier, m.calibration.scores, el::interval_z());
    if (m.scales.size() > 1) {
      TextTable t({"scale group", "multiplier"});
      for (const auto& [g, v] : m.scales) t.add_row({g, fmt::format("{:.4g}", v)});
      text += t.render();
    }
    emit(text);
  });
}

std::string interval_header() {
  return fmt::format("{:.0f} % interval J", 100 * el::kIntervalCoverage);
}

std::string interval_text(const el::Interval& iv) {
  return fmt::format("{:.4g} .. {:.4g}", iv.low.value(), iv.high.value());
}

Json interval_json(const el::Interval& iv) {
  return Json{{"low", iv.low.value()}, {"high", iv.high.value()}};
}

el::EnergyModel load_model(const std::string& path) {
  return el::EnergyModel::from_json(JsonDocument::load_file(path).root());
}

// Candidate rows for a fitted model: with a descriptor scale, every row's model and GPU must be
// in the catalogues before anything is printed.
el::Dataset read_candidates(const el::EnergyModel& m, const std::string& path) {
  el::Dataset d = read_data(path, el::EnergyColumn::kOptional);
  if (m.descriptors) el::require_descriptors(d);
  return d;
}

// A model fitted on drained runs predicts candidates without the drain columns in steady state,
// which none of its training rows was measured in: said once per command, not guessed away.
std::vector<std::string> candidate_notes(const el::EnergyModel& m, const el::Dataset& d) {
  std::vector<std::string> notes;
  if (m.drained && !d.has_drain)
    notes.push_back(fmt::format(
        "{}: the model was fitted on runs with max_output_tokens and requests (the run's drain) "
        "and the candidates give neither, so they are predicted in steady state, without a "
        "drain; give both columns to predict runs like the training ones",
        d.source));
  if (m.ranges.empty()) {
    notes.push_back(fmt::format(
        "{}: the model file keeps no training ranges (saved before they were kept), so no "
        "candidate is checked for extrapolation; fit it again to have them checked",
        d.source));
    return notes;
  }
  std::vector<std::string> outside;
  for (const auto& s : d.samples) {
    const std::vector<el::OutOfRange> o = m.outside_training_range(s);
    if (o.empty()) continue;
    std::vector<std::string> parts;
    for (const auto& x : o) parts.push_back(el::describe(x));
    outside.push_back(fmt::format("line {} {}", s.line, fmt::join(parts, ", ")));
  }
  if (outside.empty()) return notes;
  // The first few name the inputs; every one is in the JSON's outside_training_range.
  constexpr std::size_t kListed = 5;
  const std::size_t listed = std::min(outside.size(), kListed);
  notes.push_back(fmt::format(
      "{}: {} of {} candidates lie outside the training rows' range, where the model "
      "extrapolates: {}{}",
      d.source, outside.size(), d.samples.size(),
      fmt::join(outside.begin(), outside.begin() + static_cast<long>(listed), "; "),
      outside.size() > listed ? fmt::format("; and {} more", outside.size() - listed) : ""));
  return notes;
}

Json outside_json(const std::vector<el::OutOfRange>& outside) {
  Json out = Json::array();
  for (const auto& o : outside)
    out.push_back({{"variable", o.variable},
                   {"value", o.value},
                   {"trained_low", o.low},
                   {"trained_high", o.high}});
  return out;
}

// What a command says about its candidates besides the table: notes on what it could not check,
// and a warning when the KV cache cuts some batch; on stderr, or in the JSON's notes.
struct CandidateMessages {
  std::vector<std::string> notes;
  std::string warning;

  CandidateMessages(const el::EnergyModel& m, const el::Dataset& d, const MemoryChecks& checks)
      : notes(candidate_notes(m, d)), warning(batch_limit_warning(d, checks)) {
    for (auto& n : memory_notes(d, checks)) notes.push_back(std::move(n));
  }
  Json json() const {
    Json out = notes;
    if (!warning.empty()) out.push_back(warning);
    return out;
  }
  void print() const {
    // Notes quote paths and names from the CSV: escaped like every other line on the terminal.
    for (const auto& n : notes) std::fprintf(stderr, "note: %s\n", printable(n).c_str());
    if (!warning.empty()) std::fprintf(stderr, "warning: %s\n", printable(warning).c_str());
  }
};

std::vector<std::size_t> every_row(const el::Dataset& d) {
  std::vector<std::size_t> rows(d.samples.size());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  return rows;
}

void add_predict(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("predict", "Predict energy per request for configurations");
  auto model = std::make_shared<std::string>();
  auto data = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  // --fit, not --model: everywhere else --model names a model of the catalogue (docs/cli.md).
  auto* fit = cmd->add_option("--fit", *model, "fitted model JSON from 'energylens fit --out'");
  add_deprecated_alias(cmd, fit, "--model", *model);
  cmd->parse_complete_callback([model] {
    if (model->empty()) throw CLI::RequiredError("--fit");
  });
  cmd->add_option("--data", *data, "canonical CSV (energy_j optional)")->required();
  cmd->add_flag("--json", *json, "print one JSON document");
  cmd->callback([=] {
    const el::EnergyModel m = load_model(*model);
    const el::Dataset d = read_candidates(m, *data);
    Json rows = Json::array();
    const MemoryChecks checks = check_memory(d, every_row(d));
    const MemoryColumns columns = memory_columns(d, checks);
    // The rows in file order, under a heading each time the scenario changes (as select's): a
    // scenario column would take most of a line.
    std::string text;
    std::optional<TextTable> t;
    const auto flush = [&] {
      if (t) text += t->render() + "\n";
    };
    std::vector<double> measured, predicted;
    for (std::size_t i = 0; i < d.samples.size(); ++i) {
      const el::Sample& s = d.samples[i];
      const double p = m.predict(s).value();
      const el::Interval iv = m.interval(s);
      const std::optional<el::MemoryFit>& fit = checks.fits[i];
      rows.push_back({{"line", s.line},
                      {"scenario", s.scenario},
                      {"predicted_energy_j", p},
                      {"interval_j", interval_json(iv)},
                      {"measured_energy_j", s.energy ? Json(s.energy->value()) : Json(nullptr)},
                      {"outside_training_range", outside_json(m.outside_training_range(s))},
                      {"memory", memory_json(fit)}});
      if (i == 0 || s.scenario != d.samples[i - 1].scenario) {
        flush();
        text += wrap("scenario " + printable(s.scenario), kLineWidth, "", "  ");
        t.emplace(with_memory_header(
            {"line", "config", "predicted J", interval_header(), "measured J"}, columns));
      }
      t->add_row(with_memory(
          {std::to_string(s.line), config_text(s), fmt::format("{:.4g}", p), interval_text(iv),
           s.energy ? fmt::format("{:.4g}", s.energy->value()) : "-"},
          columns, fit));
      if (s.energy) {
        measured.push_back(s.energy->value());
        predicted.push_back(p);
      }
    }
    const bool scored = measured.size() == d.samples.size();
    const double mape = scored ? el::mape_percent(measured, predicted) : 0.0;
    const CandidateMessages messages(m, d, checks);
    if (*json) {
      emit(Json{{"rows", rows},
                {"interval_coverage", el::kIntervalCoverage},
                {"mape_percent", scored ? Json(mape) : Json(nullptr)},
                {"notes", messages.json()}}
               .dump(2) +
           "\n");
      return;
    }
    flush();
    messages.print();
    emit(text + (scored ? fmt::format("MAPE {:.1f} %\n", mape) : ""));
  });
}

std::string closeness_text(const el::Ranked& r) {
  if (r.close_to_best) return "yes";
  return r.bag_disagrees ? "bag splits" : "";
}

// Why the pick is not evidence, against the first candidate that makes it so.
std::string too_close_text(const el::Selection& sel, const el::Dataset& d) {
  if (!sel.too_close_to_call) return "";
  const auto r = std::find_if(sel.ranking.begin() + 1, sel.ranking.end(), [](const el::Ranked& x) {
    return x.close_to_best || x.bag_disagrees;
  });
  return fmt::format(" (too close to call against {}: {})", config_text(d.samples[r->row]),
                     r->close_to_best ? "within the fit's row noise"
                                      : "beyond the training range the bag's fits order them "
                                        "differently");
}

// Where a wrapped "energy-optimal:" or "latency-optimal:" line goes on: under its first word.
constexpr std::string_view kOptimalIndent = "                 ";

void add_select(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "select", "Rank candidate configurations by predicted energy, per scenario");
  auto model = std::make_shared<std::string>();
  auto data = std::make_shared<std::string>();
  auto scenario = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  // --fit, not --model: everywhere else --model names a model of the catalogue (docs/cli.md).
  auto* fit = cmd->add_option("--fit", *model, "fitted model JSON from 'energylens fit --out'");
  add_deprecated_alias(cmd, fit, "--model", *model);
  cmd->parse_complete_callback([model] {
    if (model->empty()) throw CLI::RequiredError("--fit");
  });
  cmd->add_option("--candidates", *data, "canonical CSV of candidates (energy_j optional)")
      ->required();
  cmd->add_option("--scenario", *scenario, "only this scenario");
  cmd->add_flag("--json", *json, "print one JSON document");
  cmd->callback([=] {
    const el::EnergyModel m = load_model(*model);
    const el::Dataset d = read_candidates(m, *data);
    std::vector<el::Selection> selections = el::select_configurations(m, d);
    if (!scenario->empty()) {
      std::erase_if(selections, [&](const el::Selection& s) { return s.scenario != *scenario; });
      if (selections.empty())
        throw Error::invalid(*data, "--scenario", *scenario, "no candidate has this scenario");
    }
    std::vector<const el::Ranked*> shown;
    for (const auto& sel : selections)
      for (const auto& r : sel.ranking) shown.push_back(&r);
    std::sort(shown.begin(), shown.end(), [](auto a, auto b) { return a->row < b->row; });
    MemoryChecks checks;  // select checked every candidate's memory as it ranked them
    for (const el::Ranked* r : shown) {
      checks.rows.push_back(r->row);
      checks.fits.push_back(r->memory);
    }
    const MemoryColumns columns = memory_columns(d, checks);
    Json out = Json::array();
    std::string text;
    for (const auto& sel : selections) {
      Json ranking = Json::array();
      TextTable t(with_memory_header({"rank", "config", "predicted J", interval_header(),
                                      "close to best", "measured J", "time s"},
                                     columns));
      for (std::size_t i = 0; i < sel.ranking.size(); ++i) {
        const el::Ranked& r = sel.ranking[i];
        const el::Sample& s = d.samples[r.row];
        ranking.push_back(
            {{"line", s.line},
             {"tp", s.tp},
             {"pp", s.pp},
             {"batch", s.batch},
             {"predicted_energy_j", r.predicted.value()},
             {"interval_j", interval_json(r.interval)},
             {"close_to_best", r.close_to_best},
             {"bag_disagrees", r.bag_disagrees},
             {"outside_training_range", outside_json(r.outside)},
             {"memory", memory_json(r.memory)},
             {"measured_energy_j", s.energy ? Json(s.energy->value()) : Json(nullptr)},
             {"time_s", s.time ? Json(s.time->value()) : Json(nullptr)}});
        t.add_row(with_memory(
            {std::to_string(i + 1), config_text(s), fmt::format("{:.4g}", r.predicted.value()),
             interval_text(r.interval), i > 0 ? closeness_text(r) : "",
             s.energy ? fmt::format("{:.4g}", s.energy->value()) : "-",
             s.time ? fmt::format("{:.4g}", s.time->value()) : "-"},
            columns, r.memory));
      }
      const el::Sample& best = d.samples[sel.ranking.front().row];
      Json j{{"scenario", sel.scenario},
             {"none_fits", sel.none_fits},
             {"energy_optimal_line", sel.none_fits ? Json(nullptr) : Json(best.line)},
             {"too_close_to_call", sel.too_close_to_call},
             {"latency_optimal_line",
              sel.latency_optimal ? Json(d.samples[*sel.latency_optimal].line) : Json(nullptr)},
             {"latency_penalty_predicted_percent",
              sel.latency_penalty_predicted_percent ? Json(*sel.latency_penalty_predicted_percent)
                                                    : Json(nullptr)},
             {"latency_penalty_measured_percent", sel.latency_penalty_measured_percent
                                                      ? Json(*sel.latency_penalty_measured_percent)
                                                      : Json(nullptr)},
             {"ranking", ranking}};
      out.push_back(j);
      text += wrap("scenario " + printable(sel.scenario), kLineWidth, "", "  ") + t.render();
      if (sel.none_fits) {
        text +=
            wrap(fmt::format("energy-optimal:  none: no candidate fits in {:.0f} % of its GPUs' "
                             "memory (BF16 weights, or a KV cache for one sequence of the "
                             "model's maximum context)",
                             100 * el::kUsableMemoryFraction),
                 kLineWidth, "", kOptimalIndent) +
            "latency-optimal: none\n\n";
        continue;
      }
      text += wrap(fmt::format("energy-optimal:  {}{}", config_text(best), too_close_text(sel, d)),
                   kLineWidth, "", kOptimalIndent);
      if (sel.latency_optimal)
        text += wrap(fmt::format("latency-optimal: {} (predicted +{:.1f} % energy{})",
                                 config_text(d.samples[*sel.latency_optimal]),
                                 *sel.latency_penalty_predicted_percent,
                                 sel.latency_penalty_measured_percent
                                     ? fmt::format(", measured +{:.1f} %",
                                                   *sel.latency_penalty_measured_percent)
                                     : ""),
                     kLineWidth, "", kOptimalIndent);
      else
        text += "latency-optimal: unknown (candidates have no time_s)\n";
      text += "\n";
    }
    const CandidateMessages messages(m, d, checks);
    if (*json) {
      emit(Json{{"scenarios", out}, {"notes", messages.json()}}.dump(2) + "\n");
      return;
    }
    messages.print();
    emit(text);
  });
}

// A pool of 70 % leaves 30 % of the rows to test on: on ML.ENERGY's 356 rows a pool of 249, five
// times the 50 rows a user measures, and 107 test rows.
constexpr double kDesignPoolShare = 0.7;

// A design over many candidates (its cost grows with candidates x parameters^2 per pick) reports
// its progress once it has run this long; a short one stays quiet.
constexpr auto kDesignQuietFor = std::chrono::seconds(1);

void add_design(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "design",
      "Choose which configurations to measure (D-optimal, reads no energy): helps predict "
      "unmeasured GPUs and models, not ranking");
  auto data = std::make_shared<std::string>();
  auto budget = std::make_shared<long long>(0);
  auto json = std::make_shared<bool>(false);
  auto fit = std::make_shared<FitArgs>();
  cmd->add_option("--candidates", *data, "canonical CSV of candidates (energy_j ignored)")
      ->required();
  cmd->add_option("--budget", *budget, "how many configurations to measure")->required();
  cmd->add_flag("--json", *json, "print one JSON document");
  auto quiet = std::make_shared<bool>(false);
  cmd->add_flag("--quiet", *quiet, "no progress on stderr");
  fit->add_descriptors(cmd);
  cmd->callback([=] {
    const el::Dataset d = read_data(*data, el::EnergyColumn::kOptional);
    const el::FitOptions o = fit->options();
    if (*budget < 1 || static_cast<std::size_t>(*budget) > d.samples.size())
      throw Error::invalid(
          *data, "--budget", std::to_string(*budget),
          fmt::format("must be between 1 and the {} candidates", d.samples.size()));
    if (o.descriptors) el::require_descriptors(d);
    const auto start = std::chrono::steady_clock::now();
    std::optional<Progress> progress;
    const auto n = static_cast<std::size_t>(*budget);
    const std::vector<el::DesignPick> picks =
        el::design_measurements(d.samples, n, o, [&](std::size_t done) {
          if (!progress && !*quiet && std::chrono::steady_clock::now() - start > kDesignQuietFor)
            progress.emplace("energylens design", n);
          if (progress) progress->update(done);
        });
    if (progress) progress->finish();
    Json out = Json::array();
    // Scenarios by number in the table, named below it: a scenario column would take most of a
    // line.
    TextTable t({"pick", "line", "scenario", "config", "gain (nats)"});
    std::vector<std::string> scenarios;
    for (std::size_t i = 0; i < picks.size(); ++i) {
      const el::Sample& s = d.samples[picks[i].row];
      auto known = std::find(scenarios.begin(), scenarios.end(), s.scenario);
      if (known == scenarios.end()) known = scenarios.insert(known, s.scenario);
      out.push_back({{"pick", i + 1},
                     {"line", s.line},
                     {"scenario", s.scenario},
                     {"tp", s.tp},
                     {"pp", s.pp},
                     {"dp", s.dp},
                     {"batch", s.batch},
                     {"gain", picks[i].gain}});
      t.add_row({std::to_string(i + 1), std::to_string(s.line),
                 std::to_string(known - scenarios.begin() + 1), config_text(s),
                 fmt::format("{:.3g}", picks[i].gain)});
    }
    std::string legend = "\nscenarios:\n";
    for (std::size_t k = 0; k < scenarios.size(); ++k)
      legend += wrap(fmt::format("{:>4}  {}", k + 1, printable(scenarios[k])), kLineWidth, "",
                     "        ");
    emit(*json
             ? Json{{"candidates", d.samples.size()}, {"budget", n}, {"picks", out}}.dump(2) + "\n"
             : wrap(fmt::format("Measure these {} of {} candidates, in this order (gain: what "
                                "each adds to log det of the fit's information, at a point "
                                "that reads no energy):",
                                n, d.samples.size())) +
                   "\n" + t.render() + legend);
  });
}

void add_evaluate(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "evaluate", "Compare EnergyLens with the baselines on random train/test splits");
  auto data = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto opts = std::make_shared<el::EvaluateOptions>();
  auto fit = std::make_shared<FitArgs>();
  cmd->add_option("--data", *data, "canonical CSV")->required();
  cmd->add_option("--train-size", opts->train_size, "training rows per split");
  cmd->add_option("--seeds", opts->seeds, "number of random splits");
  auto design = std::make_shared<std::string>("random");
  cmd->add_option("--design", *design,
                  "how the training rows are chosen: random, or d-optimal (energylens design on "
                  "a pool of the rows, which reads no energy)");
  auto pool = std::make_shared<std::optional<double>>();
  cmd->add_option("--pool", *pool,
                  "share of the rows a seed puts in the pool the training rows are chosen from; "
                  "the rest are the test rows (default: 0.7 with --design d-optimal; none with "
                  "random: train on random rows, test on all the others)");
  cmd->add_flag("--json", *json, "print one JSON document");
  auto quiet = std::make_shared<bool>(false);
  cmd->add_flag("--quiet", *quiet, "no progress on stderr");
  fit->add(cmd);
  cmd->callback([=] {
    el::EvaluateOptions o = *opts;
    o.design = el::parse_design(*design);
    o.pool_share = pool->value_or(o.design == el::Design::kDOptimal ? kDesignPoolShare : 0.0);
    const el::Dataset d = read_data(*data);
    o.progress = !*quiet;
    o.fit = fit->options();
    o.seed = fit->seed;
    const el::EvaluationReport r = el::evaluate(d, o);
    emit(*json ? r.to_json().dump(2) + "\n" : r.to_markdown());
  });
}

void add_discover(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "discover", "Symbolic regression: the loss-complexity Pareto front of closed forms");
  auto data = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto opts = std::make_shared<el::DiscoverOptions>();
  auto scale_by = std::make_shared<std::string>("model,gpu");
  cmd->add_option("--data", *data, "canonical CSV")->required();
  cmd->add_option("--population", opts->population, "individuals per generation");
  cmd->add_option("--generations", opts->generations, "generations per island");
  cmd->add_option("--islands", opts->islands, "independent populations");
  cmd->add_option("--max-complexity", opts->max_complexity, "largest tree, in nodes");
  cmd->add_option("--parsimony", opts->parsimony, "loss penalty per node");
  cmd->add_option("--seed", opts->seed, "random seed");
  cmd->add_option("--scale-by", *scale_by,
                  "columns forming a scale group with its own multiplier: any of "
                  "model,gpu,scenario, or none");
  auto descriptors = std::make_shared<std::string>("off");
  cmd->add_option("--descriptors", *descriptors,
                  "on: search over the model and GPU descriptors too (use with --scale-by none)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_flag("--json", *json, "print one JSON document");
  auto quiet = std::make_shared<bool>(false);
  cmd->add_flag("--quiet", *quiet, "no progress on stderr");
  cmd->callback([=] {
    const el::Dataset d = read_data(*data);
    el::DiscoverOptions o = *opts;
    o.scale_by = el::parse_scale_by(*scale_by);
    o.descriptors = *descriptors == "on";
    o.progress = !*quiet;
    const el::DiscoverResult r = el::discover(d, o);
    Json front = Json::array();
    // Each member on a line of its own, its expression wrapped under the expression column.
    std::string text = fmt::format("{:>10}  {:>11}  {}\n", "complexity", "loss (MSRE)",
                                   "expression (E = scale x expr)");
    const std::string indent(25, ' ');
    for (const auto& m : r.front) {
      front.push_back({{"complexity", m.complexity},
                       {"loss", m.loss},
                       {"scale", m.scale},
                       {"expression", m.expression.to_string()}});
      text += wrap(fmt::format("{:.4g} * {}", m.scale, m.expression.to_string()), kLineWidth,
                   fmt::format("{:>10}  {:>11.4g}  ", m.complexity, m.loss), indent);
    }
    Json vars = Json::array();
    for (auto v : r.variables) vars.push_back(std::string(el::var_name(v)));
    const el::RecoveryVerdict& v = r.recovery;
    const Json recovery{{"recovered", v.recovered},
                        {"closed_form_rms", v.closed_form_rms},
                        {"expression_rms", v.expression_rms},
                        {"disagreement", v.disagreement},
                        {"verdict", v.line}};
    emit(*json ? Json{{"variables", vars}, {"front", front}, {"recovery", recovery}}.dump(2) + "\n"
               : text + "\n" + wrap("Verdict: " + v.line, kLineWidth, "", "  "));
  });
}

}  // namespace

void register_energylens_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("energylens", "EnergyLens: closed-form LLM inference energy");
  cmd->require_subcommand(1);
  add_import(*cmd);
  add_fit(*cmd);
  add_predict(*cmd);
  add_select(*cmd);
  add_design(*cmd);
  add_evaluate(*cmd);
  add_discover(*cmd);
}

}  // namespace kareus::cli
