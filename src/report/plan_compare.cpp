// SPDX-License-Identifier: Apache-2.0
#include "kareus/report/plan_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "kareus/core/error.hpp"
#include "kareus/core/table.hpp"
#include "kareus/core/wrap.hpp"

namespace kareus::report {

namespace {

struct Side {
  std::string label;
  double time = 0;
  double energy = 0;
  JsonValue ledger;
};

constexpr std::pair<const char*, const char*> kEnergyParts[] = {
    {"static", "static (blocked power while working)"},
    {"idle", "idle power at the clock, above blocked"},
    {"compute_dynamic", "compute dynamic"},
    {"collective_dynamic", "collective dynamic"},
    {"pipeline_waits", "pipeline waits"}};
constexpr std::pair<const char*, const char*> kTimeParts[] = {
    {"compute", "compute alone"},
    {"overlap", "compute beside a collective"},
    {"collective", "exposed collectives"},
    {"launch_gaps", "launch gaps"},
    {"pipeline_waits", "pipeline waits"}};

bool is_plan_id(const std::string& s) {
  std::uint32_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

std::string known_methods(const JsonValue& methods) {
  std::string out;
  for (const auto& m : methods.keys()) out += (out.empty() ? "" : ", ") + m;
  return out;
}

Side read_side(const JsonValue& summary, const PlanRef& ref, const std::string& where) {
  const JsonValue methods = summary.at("methods");
  if (ref.which == "selected") {
    const JsonValue selected = summary.at("selected");
    const JsonValue point = selected.at("point");
    return {fmt::format("selected ({} plan {})", selected.string("method"), point.integer("plan")),
            point.number("time_s"), point.number("energy_j"), point.at("ledger")};
  }
  if (!methods.contains(ref.method))
    throw Error::invalid(where, "method", ref.method,
                         "not planned here; planned: " + known_methods(methods));
  const JsonValue m = methods.at(ref.method);
  std::optional<JsonValue> point;
  if (ref.which == "fastest") point = m.at("max_throughput");
  if (ref.which == "min-energy") point = m.at("min_energy");
  if (!point) {
    const JsonValue frontier = m.at("frontier");
    for (std::size_t i = 0; i < frontier.size() && !point; ++i)
      if (std::to_string(frontier.at(i).integer("plan")) == ref.which) point = frontier.at(i);
    if (!point)
      throw Error::invalid(where, "plan", ref.method + ":" + ref.which,
                           fmt::format("no such plan on {}'s frontier of {} plans (summary.json "
                                       "/methods/{}/frontier lists their ids)",
                                       ref.method, frontier.size(), ref.method));
  }
  if (!point->contains("ledger"))
    throw Error::invalid(where, "ledger", ref.method,
                         "summary.json carries no ledger; plan again with this version of kareus");
  const std::string what =
      ref.which == "fastest" || ref.which == "min-energy" ? ref.which : "plan " + ref.which;
  return {fmt::format("{} {} (plan {})", ref.method, what, point->integer("plan")),
          point->number("time_s"), point->number("energy_j"), point->at("ledger")};
}

std::string workload_line(const JsonValue& w) {
  const JsonValue p = w.at("parallelism");
  return fmt::format("{} on {} (TP{} CP{} PP{} DP{}, {} microbatches of {} x {})",
                     w.string("model"), w.string("gpu"), p.integer("tp"), p.integer("cp"),
                     p.integer("pp"), p.integer("dp"), p.integer("microbatches"),
                     p.integer("microbatch_size"), p.integer("sequence_length"));
}

std::string signed_energy(double j) {
  return std::fabs(j) >= 1000 ? fmt::format("{:+.1f} kJ", j / 1000) : fmt::format("{:+.0f} J", j);
}

}  // namespace

PlanRef parse_plan_ref(const std::string& text, const std::string& where) {
  if (text == "selected") return {"", "selected"};
  const std::size_t colon = text.find(':');
  PlanRef r{text.substr(0, colon), colon == std::string::npos ? "fastest" : text.substr(colon + 1)};
  if (r.method.empty() || !(r.which == "fastest" || r.which == "min-energy" || is_plan_id(r.which)))
    throw Error::invalid(where, "plan", text,
                         "expected METHOD, METHOD:fastest, METHOD:min-energy, METHOD:PLAN_ID or "
                         "selected");
  return r;
}

PlanComparison compare_plans(const plan_dir::PlanFiles& files_a, const PlanRef& a,
                             const plan_dir::PlanFiles& files_b, const PlanRef& b) {
  using plan_dir::kSummary;
  const JsonDocument doc_a = JsonDocument::parse(files_a.text(kSummary), files_a.source(kSummary));
  const JsonDocument doc_b =
      &files_b == &files_a ? doc_a
                           : JsonDocument::parse(files_b.text(kSummary), files_b.source(kSummary));
  const JsonValue wa = doc_a.root().at("workload");
  const JsonValue wb = doc_b.root().at("workload");
  if (wa.raw() != wb.raw())
    throw Error::invalid("command line", field_ref("plan"), files_b.dir.string(),
                         fmt::format("plans {}, not {} as {} does", workload_line(wb),
                                     workload_line(wa), files_a.dir.string()));
  const Side sa = read_side(doc_a.root(), a, files_a.source(kSummary));
  const Side sb = read_side(doc_b.root(), b, files_b.source(kSummary));
  PlanComparison c;
  c.workload = workload_line(wa);
  c.label_a = sa.label;
  c.label_b = sb.label;
  c.time_a = sa.time;
  c.time_b = sb.time;
  c.energy_a = sa.energy;
  c.energy_b = sb.energy;
  const JsonValue ea = sa.ledger.at("energy_j"), eb = sb.ledger.at("energy_j");
  for (const auto& [key, name] : kEnergyParts)
    c.energy.push_back({name, "J", ea.number(key), eb.number(key)});
  const JsonValue ta = sa.ledger.at("gpu_time_s"), tb = sb.ledger.at("gpu_time_s");
  for (const auto& [key, name] : kTimeParts)
    c.gpu_time.push_back({name, "s", ta.number(key), tb.number(key)});
  c.replay_residual_a = sa.energy - ea.number("total");
  c.replay_residual_b = sb.energy - eb.number("total");
  return c;
}

std::string PlanComparison::explanation() const {
  std::vector<LedgerTerm> terms = energy;
  std::sort(terms.begin(), terms.end(), [](const LedgerTerm& x, const LedgerTerm& y) {
    return std::fabs(x.a - x.b) > std::fabs(y.a - y.b);
  });
  std::string out = fmt::format("{} vs {}: {:+.3f} s, {}", label_a, label_b, time_a - time_b,
                                signed_energy(energy_a - energy_b));
  std::string parts;
  for (const auto& t : terms) {
    if (std::fabs(t.a - t.b) < 0.005 * std::max(std::fabs(energy_a), 1.0)) continue;
    parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", signed_energy(t.a - t.b), t.name);
  }
  return parts.empty() ? out : out + "; " + parts;
}

std::string render_text(const PlanComparison& c) {
  // Prose folds at kLineWidth like the rest of the command line's output.
  std::string out = c.workload + "\n" + wrap(c.explanation()) + "\n";
  TextTable t({"", "A", "B", "A - B"});
  const auto row = [&](const std::string& name, double a, double b, const char* fmt_spec) {
    t.add_row({name, fmt::format(fmt::runtime(fmt_spec), a), fmt::format(fmt::runtime(fmt_spec), b),
               fmt::format(fmt::runtime(std::string(fmt_spec).insert(2, "+")), a - b)});
  };
  row("iteration time s", c.time_a, c.time_b, "{:.3f}");
  row("energy J", c.energy_a, c.energy_b, "{:.0f}");
  for (const auto& e : c.energy) row("  " + e.name, e.a, e.b, "{:.0f}");
  const auto sum = [](const std::vector<LedgerTerm>& ts, double LedgerTerm::*side) {
    double total = 0;
    for (const auto& t : ts) total += t.*side;
    return total;
  };
  row("GPU time s, all GPUs", sum(c.gpu_time, &LedgerTerm::a), sum(c.gpu_time, &LedgerTerm::b),
      "{:.2f}");
  for (const auto& g : c.gpu_time) row("  " + g.name, g.a, g.b, "{:.2f}");
  out += "A: " + c.label_a + "\nB: " + c.label_b + "\n" + t.render();
  const double worst = std::max(std::fabs(c.replay_residual_a) / std::max(c.energy_a, 1.0),
                                std::fabs(c.replay_residual_b) / std::max(c.energy_b, 1.0));
  out += "\n" + wrap(fmt::format("the split replays each plan on the noise-free emulator; its "
                                 "totals differ from the planned energies by {:+.0f} J (A) and "
                                 "{:+.0f} J (B), {:.1f} % at most",
                                 c.replay_residual_a, c.replay_residual_b, 100 * worst));
  return out;
}

Json to_json(const PlanComparison& c) {
  const auto terms = [](const std::vector<LedgerTerm>& ts) {
    Json out = Json::array();
    for (const auto& t : ts)
      out.push_back({{"term", t.name}, {"a", t.a}, {"b", t.b}, {"difference", t.a - t.b}});
    return out;
  };
  return {{"workload", c.workload},
          {"a", {{"plan", c.label_a}, {"time_s", c.time_a}, {"energy_j", c.energy_a}}},
          {"b", {{"plan", c.label_b}, {"time_s", c.time_b}, {"energy_j", c.energy_b}}},
          {"explanation", c.explanation()},
          {"energy_j", terms(c.energy)},
          {"gpu_time_s", terms(c.gpu_time)},
          {"replay_residual_j", {{"a", c.replay_residual_a}, {"b", c.replay_residual_b}}}};
}

}  // namespace kareus::report
