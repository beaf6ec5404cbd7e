// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <array>
#include <string_view>

#include "kareus/core/error.hpp"
#include "kareus/energylens/fit.hpp"
#include "kareus/energylens/model.hpp"

namespace kareus::energylens {

Json EnergyModel::to_json() const {
  Json p = Json::object();
  for (std::size_t k = 0; k < kParams; ++k) p[std::string(parameter_info()[k].name)] = params[k];
  Json groups = Json::array();
  for (const auto& [key, value] : scales)
    groups.push_back(
        {{"group", key}, {"scale", value}, {"log_variance", scale_log_variances.at(key)}});
  Json exponents = Json::object();
  for (std::size_t j = 0; j < scale_exponents.size(); ++j)
    exponents[std::string(scale_term_name(j))] = scale_exponents[j];
  Json workloads = Json::object();
  for (std::size_t w = 0; w < scale_fit.workloads.size(); ++w)
    workloads[scale_fit.workloads[w]] = scale_fit.workload_effects[w];
  Json families = Json::object();
  for (const auto& [name, f] : scale_fit.families)
    families[name] = {{"log_effect", f.log_effect}, {"variance", f.variance}};
  Json inverse = Json::array();
  for (Eigen::Index i = 0; i < scale_fit.inverse.rows(); ++i) {
    Json row = Json::array();
    for (Eigen::Index j = 0; j < scale_fit.inverse.cols(); ++j)
      row.push_back(scale_fit.inverse(i, j));
    inverse.push_back(row);
  }
  Json replicate_json = Json::array();
  for (const EnergyModel& r : replicates) replicate_json.push_back(r.to_json());
  return Json{{"params", p},
              {"scale_by", scale_by},
              {"descriptors", descriptors},
              {"scale_exponents", exponents},
              {"scale_intercept", scale_fit.intercept},
              {"row_log_variance", scale_fit.row_variance},
              {"group_log_variance", scale_fit.group_variance},
              {"family_log_variance", scale_fit.family_variance},
              {"families", families},
              {"workload_log_factors", workloads},
              {"workload_log_variance", scale_fit.workload_variance},
              {"scale_inverse", inverse},
              {"scales", groups},
              {"train_loss", train_loss},
              {"train_rows", train_rows},
              {"drained", drained},
              {"training_ranges", ranges_to_json(ranges)},
              {"bootstrap", replicate_json},
              {"bags", bags},
              {"interval_calibration", calibration.to_json()},
              {"shape_prior_weight", shape_prior_weight}};
}

namespace {

// A parser refuses a field of the options ("scale_by = colour: allowed: ..."); read from a model
// file, the same refusal names the file and key instead.
template <class Parse>
auto parse_as_key(const JsonValue& value, std::string_view field, std::string_view text,
                  Parse parse) {
  try {
    return parse(text);
  } catch (const Error& e) {
    if (e.field() != field) throw;
    value.fail(e.allowed());
  }
}

// Parameters of terms the closed form does not have: a file that gives one a value other than 0
// predicts with it, so it cannot be read as if the term were absent.
constexpr std::array<std::string_view, 4> kForeignParams = {"c_tp", "c_pp", "c_dp", "k_sat"};

}  // namespace

EnergyModel EnergyModel::from_json(const JsonValue& v) {
  EnergyModel m;
  const JsonValue p = v.at("params");
  for (std::size_t k = 0; k < kParams; ++k) {
    // A file without the context, step or run-start parameter predicts as if it were 0.
    const bool optional = k == c_kv || k == c_step || k == tau_r;
    const ParamInfo& info = parameter_info()[k];
    if (optional && !p.contains(info.name)) {
      m.params[k] = 0.0;
      continue;
    }
    // A hand-edited parameter outside its fitting bounds can predict negative energy.
    const JsonValue value = p.at(info.name);
    m.params[k] = value.as_number();
    if (m.params[k] < info.lower || m.params[k] > info.upper)
      value.fail(fmt::format("{} must lie in [{:g}, {:g}]", info.name, info.lower, info.upper));
  }
  for (const std::string_view name : kForeignParams)
    if (const auto value = p.find(name); value && value->as_number() != 0.0)
      value->fail(
          fmt::format("{} is not a parameter of this closed form; fit the model again", name));
  const JsonValue sb = v.at("scale_by");
  for (std::size_t i = 0; i < sb.size(); ++i) m.scale_by.push_back(sb.at(i).as_string());
  std::string joined;
  for (const auto& s : m.scale_by) joined += (joined.empty() ? "" : ",") + s;
  parse_as_key(sb, "scale_by", joined, parse_scale_by);
  m.descriptors = v.bool_or("descriptors", false);
  if (m.descriptors) {
    const JsonValue e = v.at("scale_exponents");
    for (std::size_t j = 0; j < kScaleTerms; ++j)
      m.scale_exponents.push_back(e.number(scale_term_name(j)));
  }
  m.scale_fit.slopes = m.scale_exponents;
  m.scale_fit.intercept = v.number("scale_intercept");
  m.scale_fit.row_variance = v.at("row_log_variance").as_non_negative_number();
  m.scale_fit.group_variance = v.at("group_log_variance").as_non_negative_number();
  m.scale_fit.family_variance = v.at("family_log_variance").as_non_negative_number();
  const JsonValue families = v.at("families");
  for (const std::string& name : families.keys())
    m.scale_fit.families[name] = {families.at(name).number("log_effect"),
                                  families.at(name).at("variance").as_non_negative_number()};
  // A file without workload factors has none.
  if (const auto w = v.find("workload_log_factors"); w && !w->is_null())
    for (const std::string& name : w->keys()) {
      m.scale_fit.workloads.push_back(name);
      m.scale_fit.workload_effects.push_back(w->number(name));
    }
  // Fitted prompts per workload, which a row without input_tokens would read as its prompt.
  if (const auto w = v.find("workload_prompts"); w && !w->is_null() && w->size() > 0)
    w->fail("this model reads no fitted prompts; fit the model again");
  if (v.contains("workload_log_variance"))
    m.scale_fit.workload_variance = v.at("workload_log_variance").as_non_negative_number();
  const JsonValue inv = v.at("scale_inverse");
  const auto p_dim =
      static_cast<Eigen::Index>(m.scale_exponents.size() + m.scale_fit.workloads.size() + 1);
  if (inv.size() != static_cast<std::size_t>(p_dim))
    inv.fail(fmt::format("a {0} x {0} matrix (1 + scale exponents + workload factors)", p_dim));
  m.scale_fit.inverse.resize(p_dim, p_dim);
  for (Eigen::Index i = 0; i < p_dim; ++i) {
    const JsonValue row = inv.at(static_cast<std::size_t>(i));
    if (row.size() != static_cast<std::size_t>(p_dim)) row.fail(fmt::format("{} numbers", p_dim));
    for (Eigen::Index j = 0; j < p_dim; ++j)
      m.scale_fit.inverse(i, j) = row.at(static_cast<std::size_t>(j)).as_number();
  }
  const JsonValue groups = v.at("scales");
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::string key = groups.at(i).string("group");
    m.scales[key] = groups.at(i).positive_number("scale");
    m.scale_log_variances[key] = groups.at(i).at("log_variance").as_non_negative_number();
  }
  m.train_loss = v.number_or("train_loss", 0.0);
  if (v.contains("shape_prior_weight"))
    m.shape_prior_weight = v.at("shape_prior_weight").as_non_negative_number();
  m.train_rows = static_cast<std::size_t>(v.integer_or("train_rows", 0));
  m.drained = v.bool_or("drained", false);
  // A file without training ranges has none: its candidates are not checked.
  if (const auto r = v.find("training_ranges"); r && !r->is_null()) m.ranges = ranges_from_json(*r);
  if (v.contains("bootstrap")) {
    const JsonValue reps = v.at("bootstrap");
    for (std::size_t i = 0; i < reps.size(); ++i) m.replicates.push_back(from_json(reps.at(i)));
  }
  if (v.contains("bags")) {
    const JsonValue bags = v.at("bags");
    m.bags = static_cast<int>(v.integer_or("bags", 1));
    if (m.bags < 1 || static_cast<std::size_t>(m.bags) > m.replicates.size() + 1)
      bags.fail(fmt::format("must lie in [1, {}] (1 + the bootstrap replicates)",
                            m.replicates.size() + 1));
  }
  // A file without a calibration, or an uncalibrated one (null), keeps the normal multiplier.
  if (const auto c = v.find("interval_calibration"); c && !c->is_null())
    m.calibration = IntervalCalibration::from_json(*c);
  return m;
}

}  // namespace kareus::energylens
