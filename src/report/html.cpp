// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <cctype>

#include "charts.hpp"
#include "kareus/report/plan_report.hpp"

namespace kareus::report {
namespace {

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A script element ends at the first "</script", whatever JavaScript makes of it. "<\/script"
// means the same inside strings, template literals and regular expressions, which is the only
// place a library has it; the page's JSON escapes every "</" (JSON allows "\/").
std::string script_safe(const std::string& text, bool json) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] != '<' || i + 1 >= text.size() || text[i + 1] != '/') continue;
    std::string next = text.substr(i + 2, 6);
    for (auto& c : next) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (json || next == "script") out += '\\';
  }
  return out;
}

std::string number(const Json& v, const char* format) {
  return v.is_number() ? fmt::format(fmt::runtime(format), v.get<double>()) : "-";
}

std::string pct(const Json& v) {
  return v.is_number() ? fmt::format("{:+.1f}%", 100 * v.get<double>()) : "-";
}

std::string row(const std::vector<std::string>& cells, const char* tag = "td") {
  std::string r = "<tr>";
  for (const auto& c : cells) r += fmt::format("<{0}>{1}</{0}>", tag, c);
  return r + "</tr>\n";
}

std::string savings_table(const Json& data) {
  std::string t =
      "<table>\n" + row({"method", "fastest s", "energy J", "min-energy s", "energy J", "points",
                         "time vs megatron", "energy vs megatron", "iso-time energy",
                         "iso-energy time", "measurements", "profiling GPU-h"},
                        "th");
  for (const auto& m : data.at("methods")) {
    const auto& mt = m.at("metrics");
    t += row({escape(m.at("method").get<std::string>()),
              number(m.at("max_throughput").at("time_s"), "{:.3f}"),
              number(m.at("max_throughput").at("energy_j"), "{:.0f}"),
              number(m.at("min_energy").at("time_s"), "{:.3f}"),
              number(m.at("min_energy").at("energy_j"), "{:.0f}"),
              std::to_string(m.at("frontier_size").get<long>()),
              pct(mt.at("max_throughput_time_reduction")),
              pct(mt.at("max_throughput_energy_reduction")),
              pct(mt.at("iso_time_energy_reduction")), pct(mt.at("iso_energy_time_reduction")),
              std::to_string(m.at("measurements").get<long>()),
              number(m.at("profiling_gpu_hours"), "{:.1f}")});
  }
  return t + "</table>\n";
}

std::string ten_point_table(const Json& data) {
  std::string t = "<table>\n";
  std::vector<std::string> head = {"method"};
  for (int i = 1; i <= 10; ++i) head.push_back(std::to_string(i));
  t += row(head, "th");
  for (const auto& m : data.at("methods")) {
    std::vector<std::string> cells = {escape(m.at("method").get<std::string>())};
    for (const auto& p : m.at("ten_point_frontier"))
      cells.push_back(fmt::format("{:.3f} s<br>{:.0f} J<br><small>plan {}</small>",
                                  p.at("time_s").get<double>(), p.at("energy_j").get<double>(),
                                  p.at("plan").get<long>()));
    while (cells.size() < head.size()) cells.emplace_back("");
    t += row(cells);
  }
  return t + "</table>\n";
}

std::string choices_table(const Json& data) {
  const auto& choices = data.at("partitions").at("choices");
  if (choices.empty())
    return "<p>The schedule runs every instruction sequentially: no partition is configured.</p>";
  std::string t = "<table>\n" + row({"partition key", "stage", "in", "clock MHz",
                                     "communication SMs", "launch slot", "instructions"},
                                    "th");
  for (const auto& c : choices)
    t += row({escape(c.at("key").get<std::string>()), std::to_string(c.at("stage").get<int>()),
              escape(c.at("role").get<std::string>()), std::to_string(c.at("clock_mhz").get<int>()),
              std::to_string(c.at("sms").get<int>()), escape(c.at("slot").get<std::string>()),
              std::to_string(c.at("instructions").get<int>())});
  return t + "</table>\n";
}

std::string facts(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string out = "<dl>";
  for (const auto& [k, v] : items)
    out += fmt::format("<dt>{}</dt><dd>{}</dd>", escape(k), escape(v));
  return out + "</dl>\n";
}

std::string text_or(const Json& obj, const char* key, const char* fallback) {
  if (!obj.contains(key)) return fallback;
  const auto& v = obj.at(key);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string workload_facts(const Json& data) {
  const auto& w = data.at("workload");
  const auto& p = w.at("parallelism");
  return facts(
      {{"model", w.at("model").get<std::string>()},
       {"GPUs", fmt::format("{} x {}", w.at("gpus").get<int>(), w.at("gpu").get<std::string>())},
       {"parallelism",
        fmt::format("TP{} CP{} PP{} DP{}, layers per stage {}", p.at("tp").get<int>(),
                    p.at("cp").get<int>(), p.at("pp").get<int>(), p.at("dp").get<int>(),
                    p.at("layer_split").dump())},
       {"batch",
        fmt::format("{} microbatches of {} x {} tokens, recompute {}",
                    p.at("microbatches").get<int>(), p.at("microbatch_size").get<int>(),
                    p.at("sequence_length").get<int>(), p.at("recompute").get<std::string>())}});
}

std::string provenance_facts(const Json& data, const ChartLibrary& library) {
  const auto& p = data.at("provenance");
  return facts({{"kareus version", text_or(p, "version", "not recorded")},
                {"executor", text_or(p, "executor", "not recorded")},
                {"measurement store", text_or(p, "store", "not recorded")},
                {"emulator noise", text_or(p, "noise", "not recorded")},
                {"partition measurements",
                 fmt::format("{} ({} reused from the store)", p.at("measurements").get<long>(),
                             p.at("measurements_reused").get<long>())},
                {"profiling GPU-hours, all methods",
                 fmt::format("{:.1f}", p.at("profiling_gpu_hours").get<double>())},
                {"charts", library.versions + " (BSD-3-Clause), inlined"}});
}

std::string timeline_note(const Json& data) {
  const auto& t = data.at("timeline");
  std::string note = fmt::format(
      "Re-run on the emulator: pipeline {:.3f} s + gradient reduction and optimizer step {:.3f} s "
      "= {:.3f} s per "
      "iteration; the plan predicted {:.3f} s. Grey: a stage waiting for its neighbour's "
      "activation or gradient.",
      t.at("pipeline_time_s").get<double>(), t.at("tail_s").get<double>(),
      t.at("iteration_time_s").get<double>(), t.at("predicted_iteration_time_s").get<double>());
  if (const int n = t.at("step_clock_instructions").get<int>(); n > 0)
    note += fmt::format(
        " {} instructions change clock between partitions; they are drawn at "
        "their first clock.",
        n);
  return escape(note);
}

const char* kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 24px auto; padding: 0 16px; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; font-size: 0.9em; }
dt { color: #555; } dd { margin: 0; }
.chart { width: 100%; } .note { color: #555; font-size: 0.85em; }
#report-errors { color: #b00; white-space: pre-wrap; }
)";

// Runs first: whatever goes wrong later (a library, a spec, a render) is kept, shown on the
// page and left in data-errors for a test to read.
const char* kErrorCapture = R"(
window.kareusReport = {errors: [], warnings: []};
window.addEventListener('error', e => kareusReport.errors.push(String(e.message)));
window.addEventListener('unhandledrejection', e => kareusReport.errors.push(String(e.reason)));
for (const [level, list] of [['error', 'errors'], ['warn', 'warnings']]) {
  const original = console[level].bind(console);
  console[level] = (...args) => { kareusReport[list].push(args.map(String).join(' ')); original(...args); };
}
)";

// Fills the datasets, embeds each chart as SVG and records how many elements each chart's
// counted mark drew; data-status is set last, once every chart has resolved or failed.
const char* kRender = R"(
(async () => {
  const page = JSON.parse(document.getElementById('kareus-data').textContent);
  const d = page.data;
  const datasets = {frontier: d.frontier, timeline_bars: d.timeline.bars,
                    timeline_gaps: d.timeline.gaps, partition_points: d.partitions.points};
  for (const c of page.charts) {
    const el = document.getElementById(c.id);
    try {
      const spec = Object.assign({}, c.spec, {datasets});
      await vegaEmbed(el, spec, {renderer: 'svg', actions: false});
      el.dataset.marks = el.querySelectorAll('g.' + c.marks + '_marks > path').length;
    } catch (e) {
      kareusReport.errors.push(c.id + ': ' + (e && e.message ? e.message : String(e)));
    }
  }
  document.getElementById('report-errors').textContent = kareusReport.errors.join('\n');
  document.body.dataset.errors = JSON.stringify(kareusReport.errors);
  document.body.dataset.warnings = JSON.stringify(kareusReport.warnings);
  document.body.dataset.status = kareusReport.errors.length ? 'failed' : 'rendered';
})();
)";

// The plan against its measured run (report/measured_compare.hpp), from its JSON form.
std::string measured_section(const Json& m) {
  const auto pct = [](const Json& v) {
    return fmt::format("{:+.1f} %", 100 * v.at("error").get<double>());
  };
  const auto num = [](const Json& v, const char* key, const char* spec) {
    return fmt::format(fmt::runtime(spec), v.at(key).get<double>());
  };
  std::string h = fmt::format(
      "<h2>Measured against the plan</h2>\n<p>{}</p>\n<p class=\"note\">{} rank(s) recorded of "
      "{} GPUs, {} complete iteration(s); medians over iterations and spans "
      "(docs/calibration.md).</p>\n<table>\n<tr><th>per iteration</th><th>planned</th>"
      "<th>measured</th><th>error</th></tr>\n",
      escape(m.at("explanation").get<std::string>()), m.at("ranks").get<int>(),
      m.at("job_gpus").get<int>(), m.at("iterations").get<int>());
  const auto row = [&](const std::string& name, const Json& v, const char* spec) {
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", escape(name),
                     num(v, "planned", spec), num(v, "measured", spec), pct(v));
  };
  row("time s", m.at("iteration_time_s"), "{:.3f}");
  if (m.contains("job_energy_j")) row("energy J, all GPUs", m.at("job_energy_j"), "{:.0f}");
  h += "</table>\n<table>\n<tr><th>stage</th><th>instruction kind</th><th>spans</th>"
       "<th>time s planned</th><th>measured</th><th>error</th><th>energy J planned</th>"
       "<th>measured</th><th>error</th></tr>\n";
  for (const auto& k : m.at("kinds")) {
    const Json& t = k.at("time_s");
    std::string energy = "<td>-</td><td>-</td><td>-</td>";
    if (k.contains("energy_j")) {
      const Json& e = k.at("energy_j");
      energy = fmt::format("<td>{}</td><td>{}</td><td>{}</td>", num(e, "planned", "{:.1f}"),
                           num(e, "measured", "{:.1f}"), pct(e));
    }
    h += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}</tr>\n",
        k.at("stage").get<int>(), escape(k.at("kind").get<std::string>()),
        k.at("spans").get<std::size_t>(), num(t, "planned", "{:.4f}"), num(t, "measured", "{:.4f}"),
        pct(t), energy);
  }
  h += "</table>\n";
  for (const auto& o : m.at("outliers"))
    h += fmt::format(
        "<p><b>Outlier</b>: rank {} (stage {}, {}) {}: {}</p>\n", o.at("rank").get<int>(),
        o.at("stage").get<int>(), escape(o.at("gpu_uuid").get<std::string>()),
        escape(o.at("what").get<std::string>()), escape(o.at("detail").get<std::string>()));
  for (const auto& n : m.at("notes"))
    h += fmt::format("<p class=\"note\">{}</p>\n", escape(n.get<std::string>()));
  return h;
}

}  // namespace

// The selected plan's ledger against another plan's (kareus compare), term by term.
std::string comparison_section(const Json& data) {
  const Json& c = data.at("comparison");
  if (c.is_null()) return "";
  std::string h = "<h2>Where the energy goes</h2>\n<p class=\"note\">" +
                  escape(c.at("explanation").get<std::string>()) +
                  ". Each plan replayed on the noise-free emulator (docs/emulator.md, the energy "
                  "ledger); GPU time is summed over every GPU.</p>\n<table>\n";
  h += row({"", escape(c.at("a").at("plan").get<std::string>()),
            escape(c.at("b").at("plan").get<std::string>()), "difference"},
           "th");
  const auto add = [&](const char* unit, const char* key, const char* format,
                       const char* signed_format) {
    for (const auto& t : c.at(key))
      h += row({escape(t.at("term").get<std::string>()) + " (" + unit + ")",
                number(t.at("a"), format), number(t.at("b"), format),
                number(t.at("difference"), signed_format)});
  };
  add("J", "energy_j", "{:.0f}", "{:+.0f}");
  add("GPU-s", "gpu_time_s", "{:.2f}", "{:+.2f}");
  return h + "</table>\n";
}

std::string plan_report_html(const Json& data, const ChartLibrary& library) {
  // Methods that search no partition have nothing to plot there (and Vega warns on empty
  // scales), so that chart is left out.
  const bool searched = !data.at("partitions").at("points").empty();
  Json charts = Json::array({frontier_chart(data), timeline_chart(data)});
  if (searched) charts.push_back(partitions_chart(data));
  const Json page = {{"data", data}, {"charts", charts}};
  const auto& w = data.at("workload");
  const auto& sel = data.at("selected");
  const std::string title =
      fmt::format("Kareus plan: {} on {} x {}", w.at("model").get<std::string>(),
                  w.at("gpus").get<int>(), w.at("gpu").get<std::string>());
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += fmt::format("<title>{}</title>\n<style>{}</style>\n", escape(title), kStyle);
  h += fmt::format("<script>{}</script>\n", kErrorCapture);
  for (const auto* lib : {&library.vega, &library.vega_lite, &library.vega_embed})
    h += "<script>" + script_safe(*lib, false) + "</script>\n";
  h += "</head>\n<body>\n";
  h += fmt::format("<h1>{}</h1>\n<div id=\"report-errors\"></div>\n", escape(title));
  h += fmt::format(
      "<p>Selected: <b>{}</b>, {}: {:.3f} s and {:.0f} J per iteration (plan {}). Energy is per "
      "iteration for the whole job; reductions are positive when better.</p>\n",
      escape(sel.at("method").get<std::string>()), escape(sel.at("rule").get<std::string>()),
      sel.at("point").at("time_s").get<double>(), sel.at("point").at("energy_j").get<double>(),
      sel.at("point").at("plan").get<long>());
  h += "<h2>Iteration time–energy frontiers</h2>\n<p class=\"note\">Every method's frontier; the "
       "diamond is the selected plan, a dashed line the deadline or energy budget. Hover a point "
       "for its time, energy and plan id.</p>\n<div id=\"frontier\" class=\"chart\"></div>\n";
  h += "<h2>Savings</h2>\n<p class=\"note\">Time and energy vs Megatron-LM at maximum "
       "throughput; iso-time energy and iso-energy time vs Megatron+Perseus (docs/plan.md).</p>\n";
  h += savings_table(data);
  h += comparison_section(data);
  h += "<h2>10-point frontier</h2>\n<p class=\"note\">The artifact's sampling, fastest "
       "first.</p>\n" +
       ten_point_table(data);
  h += fmt::format(
      "<h2>The schedule as it runs</h2>\n<p class=\"note\">{}</p>\n<div id=\"timeline\" "
      "class=\"chart\"></div>\n",
      timeline_note(data));
  h += "<h2>Partition choices</h2>\n";
  h += searched ? "<p class=\"note\">Per partition key, every configuration the search measured "
                  "(faint: off the key's frontier), coloured by clock; red rings: configurations "
                  "the schedule uses.</p>\n<div id=\"partitions\"></div>\n"
                : "<p class=\"note\">The selected method searches no partition "
                  "configuration.</p>\n";
  h += choices_table(data);
  if (data.contains("measured")) h += measured_section(data.at("measured"));
  h += "<h2>Workload</h2>\n" + workload_facts(data);
  h += "<h2>Provenance</h2>\n" + provenance_facts(data, library);
  h += "<script type=\"application/json\" id=\"kareus-data\">" + script_safe(page.dump(), true) +
       "</script>\n";
  h += fmt::format("<script>{}</script>\n</body>\n</html>\n", kRender);
  return h;
}

}  // namespace kareus::report
