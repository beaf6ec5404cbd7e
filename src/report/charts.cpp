// SPDX-License-Identifier: Apache-2.0
#include "charts.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kareus::report {
namespace {

Json chart(const char* id, const char* marks, Json spec) {
  spec["$schema"] = "https://vega.github.io/schema/vega-lite/v6.json";
  return {{"id", id}, {"marks", marks}, {"spec", std::move(spec)}};
}

Json field(const char* name, const char* type, const char* title) {
  return {{"field", name}, {"type", type}, {"title", title}};
}

// Tick labels that would touch are dropped (greedily, 8 px apart): a narrow frontier's ticks ran
// together ("4.604.65").
Json spaced_labels() {
  return {{"labelOverlap", "greedy"}, {"labelSeparation", 8}};
}

// A quantitative axis that starts where the data does: frontiers sit far from zero.
Json axis(const char* name, const char* title) {
  auto f = field(name, "quantitative", title);
  f["scale"] = {{"zero", false}};
  f["axis"] = spaced_labels();
  return f;
}

// A tooltip number with a d3 format.
Json shown(const char* name, const char* title, const char* format) {
  auto f = field(name, "quantitative", title);
  f["format"] = format;
  return f;
}

// One colour scale for clocks wherever they appear, so that the timeline and the partition
// plots read alike.
Json clock_color() {
  auto f = field("clock_mhz", "quantitative", "SM clock (MHz)");
  f["scale"] = {{"scheme", "viridis"}};
  return f;
}

}  // namespace

Json frontier_chart(const Json& data) {
  const Json x = axis("time_s", "iteration time (s)");
  const Json y = axis("energy_j", "energy per iteration, whole job (J)");
  const Json color = field("method", "nominal", "method");
  const Json tooltip = Json::array(
      {field("method", "nominal", "method"), shown("time_s", "time (s)", ".4f"),
       shown("energy_j", "energy (J)", ",.0f"), field("plan", "quantitative", "plan id")});
  Json layers = Json::array();
  layers.push_back({{"name", "frontier_lines"},
                    {"mark", {{"type", "line"}, {"interpolate", "step-after"}, {"opacity", 0.5}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"color", color},
                      {"order", field("time_s", "quantitative", "time")}}}});
  layers.push_back({{"name", "frontier_points"},
                    {"mark", {{"type", "point"}, {"filled", true}, {"size", 28}}},
                    {"encoding", {{"x", x}, {"y", y}, {"color", color}, {"tooltip", tooltip}}}});
  layers.push_back({{"name", "selected_point"},
                    {"transform", Json::array({{{"filter", "datum.selected"}}})},
                    {"mark",
                     {{"type", "point"},
                      {"shape", "diamond"},
                      {"size", 260},
                      {"strokeWidth", 2.5},
                      {"color", "black"}}},
                    {"encoding", {{"x", x}, {"y", y}, {"tooltip", tooltip}}}});
  const auto& bound = data.at("selected").at("bound");
  if (bound.contains("deadline_s") || bound.contains("energy_budget_j")) {
    const bool deadline = bound.contains("deadline_s");
    const char* f = deadline ? "deadline_s" : "energy_budget_j";
    const Json enc = {{deadline ? "x" : "y",
                       {{"field", f},
                        {"type", "quantitative"},
                        {"title", deadline ? "deadline (s)" : "energy budget (J)"}}}};
    layers.push_back({{"name", "selection_bound"},
                      {"data", {{"values", Json::array({bound})}}},
                      {"mark", {{"type", "rule"}, {"strokeDash", {6, 4}}, {"color", "#c0392b"}}},
                      {"encoding", enc}});
  }
  return chart("frontier", "frontier_points",
               {{"data", {{"name", "frontier"}}},
                {"width", "container"},
                {"height", 380},
                {"layer", layers}});
}

Json timeline_chart(const Json& data) {
  const Json y = {{"field", "stage"}, {"type", "ordinal"}, {"title", "pipeline stage"}};
  const Json x = {{"field", "start_s"},
                  {"type", "quantitative"},
                  {"title", "time in the iteration (s)"},
                  {"axis", spaced_labels()}};
  const Json x2 = {{"field", "end_s"}};
  const int stages = data.at("workload").at("parallelism").at("pp").get<int>();
  double lo = 1e9, hi = 0;
  for (const auto& b : data.at("timeline").at("bars")) {
    lo = std::min(lo, b.at("clock_mhz").get<double>());
    hi = std::max(hi, b.at("clock_mhz").get<double>());
  }
  const double mid_clock = (lo + hi) / 2;
  Json layers = Json::array();
  layers.push_back({{"name", "timeline_gaps"},
                    {"data", {{"name", "timeline_gaps"}}},
                    {"mark", {{"type", "bar"}, {"color", "#d5d8dc"}, {"height", {{"band", 0.35}}}}},
                    {"encoding",
                     {{"x", x},
                      {"x2", x2},
                      {"y", y},
                      {"tooltip", Json::array({field("stage", "ordinal", "stage (waiting)"),
                                               shown("waiting_s", "waiting (s)", ".4f")})}}}});
  layers.push_back({{"name", "timeline_bars"},
                    {"data", {{"name", "timeline_bars"}}},
                    {"mark", {{"type", "bar"}, {"stroke", "white"}, {"strokeWidth", 0.5}}},
                    {"encoding",
                     {{"x", x},
                      {"x2", x2},
                      {"y", y},
                      {"color", clock_color()},
                      {"tooltip", Json::array({field("label", "nominal", "instruction"),
                                               field("stage", "ordinal", "stage"),
                                               field("clock_mhz", "quantitative", "clock (MHz)"),
                                               field("execution", "nominal", "execution"),
                                               shown("start_s", "start (s)", ".4f"),
                                               shown("end_s", "end (s)", ".4f")})}}}});
  layers.push_back(
      {{"name", "timeline_labels"},
       {"data", {{"name", "timeline_bars"}}},
       {"transform",
        Json::array({{{"calculate", "(datum.start_s + datum.end_s) / 2"}, {"as", "mid_s"}}})},
       {"mark", {{"type", "text"}, {"fontSize", 9}}},
       {"encoding",
        {{"x", {{"field", "mid_s"}, {"type", "quantitative"}}},
         {"y", y},
         {"text", {{"field", "label"}}},
         // Dark text on the light (fast) end of viridis, white on the dark end.
         {"color",
          {{"condition",
            {{"test", fmt::format("datum.clock_mhz > {}", mid_clock)}, {"value", "black"}}},
           {"value", "white"}}}}}});
  return chart("timeline", "timeline_bars",
               {{"width", "container"}, {"height", 48 * stages}, {"layer", layers}});
}

Json partitions_chart(const Json&) {
  const Json x = axis("time_ms", "partition time (ms)");
  const Json y = axis("dynamic_energy_j", "dynamic energy (J)");
  const Json tooltip = Json::array(
      {field("key", "nominal", "partition key"), field("clock_mhz", "quantitative", "clock (MHz)"),
       field("sms", "quantitative", "communication SMs"), field("slot", "nominal", "launch slot"),
       shown("time_ms", "time (ms)", ".3f"), shown("dynamic_energy_j", "dynamic energy (J)", ".3f"),
       field("frontier", "nominal", "on the key's frontier"),
       field("chosen", "nominal", "used by the schedule")});
  Json layers = Json::array();
  layers.push_back(
      {{"name", "partition_points"},
       {"mark", {{"type", "point"}, {"filled", true}, {"size", 14}}},
       {"encoding",
        {{"x", x},
         {"y", y},
         {"color", clock_color()},
         {"opacity", {{"condition", {{"test", "datum.frontier"}, {"value", 1}}}, {"value", 0.25}}},
         {"tooltip", tooltip}}}});
  layers.push_back(
      {{"name", "partition_chosen"},
       {"transform", Json::array({{{"filter", "datum.chosen"}}})},
       {"mark", {{"type", "point"}, {"size", 160}, {"strokeWidth", 2}, {"color", "#c0392b"}}},
       {"encoding", {{"x", x}, {"y", y}, {"tooltip", tooltip}}}});
  return chart("partitions", "partition_points",
               {{"data", {{"name", "partition_points"}}},
                {"columns", 2},
                {"facet", {{"field", "key"}, {"type", "nominal"}, {"title", "partition key"}}},
                {"spec", {{"width", 380}, {"height", 220}, {"layer", layers}}},
                {"resolve", {{"scale", {{"x", "independent"}, {"y", "independent"}}}}}});
}

}  // namespace kareus::report
