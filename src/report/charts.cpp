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

}  // namespace

Json frontier_chart(const Json& data) {
  const Json x = {{"field", "time_s"},
                  {"type", "quantitative"},
                  {"title", "iteration time (s)"},
                  {"scale", {{"zero", false}}}};
  const Json y = {{"field", "energy_j"},
                  {"type", "quantitative"},
                  {"title", "energy per iteration, whole job (J)"},
                  {"scale", {{"zero", false}}}};
  const Json color = field("method", "nominal", "method");
  const Json tooltip = Json::array(
      {field("method", "nominal", "method"),
       {{"field", "time_s"}, {"type", "quantitative"}, {"title", "time (s)"}, {"format", ".4f"}},
       {{"field", "energy_j"},
        {"type", "quantitative"},
        {"title", "energy (J)"},
        {"format", ",.0f"}},
       field("plan", "quantitative", "plan id")});
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
  const Json x = {
      {"field", "start_s"}, {"type", "quantitative"}, {"title", "time in the iteration (s)"}};
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
                                               {{"field", "waiting_s"},
                                                {"type", "quantitative"},
                                                {"title", "waiting (s)"},
                                                {"format", ".4f"}}})}}}});
  layers.push_back({{"name", "timeline_bars"},
                    {"data", {{"name", "timeline_bars"}}},
                    {"mark", {{"type", "bar"}, {"stroke", "white"}, {"strokeWidth", 0.5}}},
                    {"encoding",
                     {{"x", x},
                      {"x2", x2},
                      {"y", y},
                      {"color",
                       {{"field", "clock_mhz"},
                        {"type", "quantitative"},
                        {"title", "SM clock (MHz)"},
                        {"scale", {{"scheme", "viridis"}}}}},
                      {"tooltip", Json::array({field("label", "nominal", "instruction"),
                                               field("stage", "ordinal", "stage"),
                                               field("clock_mhz", "quantitative", "clock (MHz)"),
                                               field("execution", "nominal", "execution"),
                                               {{"field", "start_s"},
                                                {"type", "quantitative"},
                                                {"title", "start (s)"},
                                                {"format", ".4f"}},
                                               {{"field", "end_s"},
                                                {"type", "quantitative"},
                                                {"title", "end (s)"},
                                                {"format", ".4f"}}})}}}});
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
  const Json x = {{"field", "time_ms"},
                  {"type", "quantitative"},
                  {"title", "partition time (ms)"},
                  {"scale", {{"zero", false}}}};
  const Json y = {{"field", "dynamic_energy_j"},
                  {"type", "quantitative"},
                  {"title", "dynamic energy (J)"},
                  {"scale", {{"zero", false}}}};
  const Json tooltip = Json::array(
      {field("key", "nominal", "partition key"),
       field("clock_mhz", "quantitative", "clock (MHz)"),
       field("sms", "quantitative", "communication SMs"),
       field("slot", "nominal", "launch slot"),
       {{"field", "time_ms"}, {"type", "quantitative"}, {"title", "time (ms)"}, {"format", ".3f"}},
       {{"field", "dynamic_energy_j"},
        {"type", "quantitative"},
        {"title", "dynamic energy (J)"},
        {"format", ".3f"}},
       field("frontier", "nominal", "on the key's frontier"),
       field("chosen", "nominal", "used by the schedule")});
  Json layers = Json::array();
  layers.push_back(
      {{"name", "partition_points"},
       {"mark", {{"type", "point"}, {"filled", true}, {"size", 14}}},
       {"encoding",
        {{"x", x},
         {"y", y},
         {"color",
          {{"field", "clock_mhz"},
           {"type", "quantitative"},
           {"title", "SM clock (MHz)"},
           {"scale", {{"scheme", "viridis"}}}}},
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
