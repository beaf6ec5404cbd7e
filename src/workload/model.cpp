// SPDX-License-Identifier: Apache-2.0
#include "kareus/workload/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <limits>

#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/nearest.hpp"
#include "kareus/core/paths.hpp"
#include "kareus/workload/model_name.hpp"

namespace kareus::workload {
namespace fs = std::filesystem;

double ModelConfig::layer_parameters() const {
  const double h = hidden_size;
  const double q = static_cast<double>(num_attention_heads) * head_dim;
  const double kv = static_cast<double>(num_key_value_heads) * head_dim;
  const double attention = h * (q + 2 * kv) + q * h;
  return attention + mlp_parameters();
}

double ModelConfig::mlp_parameters() const {
  return (gated_mlp ? 3.0 : 2.0) * static_cast<double>(hidden_size) * intermediate_size;
}

double ModelConfig::embedding_parameters() const {
  return static_cast<double>(vocab_size) * hidden_size * (tie_word_embeddings ? 1 : 2);
}

double ModelConfig::total_parameters() const {
  return (layer_parameters() + (experts - 1) * mlp_parameters()) * num_hidden_layers +
         embedding_parameters();
}

double ModelConfig::active_parameters() const {
  return (layer_parameters() + (experts_per_token - 1) * mlp_parameters()) * num_hidden_layers +
         embedding_parameters();
}

std::string model_name_key(std::string_view name) {
  std::string key;
  for (const char c : name)
    if (c != '-' && c != '_' && c != ' ')
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

// A path (ending in .json or holding a '/') is read as an HF config; anything else is a
// catalogue name in any of its spellings (model_name_key).
ModelConfig load_model(const std::string& name_or_path) {
  fs::path path = name_or_path;
  std::error_code missing;
  if (path.extension() == ".json" || name_or_path.find('/') != std::string::npos) {
    if (!fs::exists(path, missing))
      throw Error::invalid("", "model", name_or_path,
                           "file not found (a path to an HF config.json, or a model name from "
                           "`kareus models`)");
    if (fs::is_directory(path, missing))
      throw Error::invalid("", "model", name_or_path,
                           "is a folder; give the config.json in it (an HF config) or a model "
                           "name (kareus models)");
  } else {
    // The catalogue's name for the one typed: "Llama-3.2-3B" is llama3.2-3b.
    const std::vector<std::string> names = list_models();
    const std::string key = model_name_key(name_or_path);
    const auto it = std::find_if(names.begin(), names.end(),
                                 [&](const std::string& n) { return model_name_key(n) == key; });
    if (it == names.end()) {
      // A folder may share a name with nothing in the catalogue, e.g. an earlier plan's --out.
      if (fs::is_directory(name_or_path, missing))
        throw Error::invalid("", "model", name_or_path,
                             "is a folder; give the config.json in it (an HF config) or a model "
                             "name (kareus models)");
      // Nearest by key, so that a slip is not counted twice for a '-' the names differ in.
      std::vector<std::string> keys;
      for (const auto& n : names) keys.push_back(model_name_key(n));
      const std::string near_key = nearest_name(key, keys);
      const std::string near =
          near_key.empty() ? ""
                           : names[std::find(keys.begin(), keys.end(), near_key) - keys.begin()];
      throw Error::invalid("", "model", name_or_path,
                           fmt::format("unknown model; {}`kareus models` lists the catalogue (or "
                                       "give a path to an HF config.json)",
                                       near.empty() ? "" : "did you mean " + near + "? "));
    }
    path = data_dir() / "models" / (*it + ".json");
  }
  const auto doc = JsonDocument::load_file(path);
  return model_from_json(doc.root(), path.stem().string() == "config"
                                         ? path.parent_path().filename().string()
                                         : path.stem().string());
}

ModelConfig model_from_json(const JsonValue& r, std::string name) {
  ModelConfig m;
  m.name = std::move(name);
  m.model_type = r.string_or("model_type", "llama");
  m.hidden_size = r.positive_int("hidden_size");
  m.num_attention_heads = r.positive_int("num_attention_heads");
  // HF configs leave some fields out; a present one must fit the int it is read into.
  auto int_or = [&](std::string_view key, int fallback) {
    const auto v = r.find(key);
    return v ? v->as_positive_int() : fallback;
  };
  m.num_key_value_heads = int_or("num_key_value_heads", m.num_attention_heads);
  if (m.num_attention_heads % m.num_key_value_heads != 0)
    r.at("num_key_value_heads").fail("must divide num_attention_heads");
  m.head_dim = int_or("head_dim", m.hidden_size / m.num_attention_heads);
  if (m.head_dim <= 0) r.at("hidden_size").fail("must be at least num_attention_heads");
  m.intermediate_size =
      r.contains("intermediate_size")
          ? r.positive_int("intermediate_size")
          : int_or("n_inner",
                   static_cast<int>(std::min<std::int64_t>(4 * std::int64_t{m.hidden_size},
                                                           std::numeric_limits<int>::max())));
  m.num_hidden_layers = r.positive_int("num_hidden_layers");
  m.vocab_size = r.positive_int("vocab_size");
  m.tie_word_embeddings = r.bool_or("tie_word_embeddings", false);
  const std::string act = r.string_or("hidden_act", "silu");
  // Gemma's GeGLU and Phi-3-small's "gegelu" are gated although their activation is a GELU.
  m.gated_mlp = act == "silu" || act == "swiglu" || act == "swish" || act == "gegelu" ||
                m.model_type.starts_with("gemma");
  m.qk_norm = r.bool_or("qk_norm", m.model_type == "qwen3" || m.model_type == "qwen3_moe");
  m.experts = int_or("num_local_experts", 1);
  m.experts_per_token = int_or("num_experts_per_tok", 1);
  if (m.experts_per_token > m.experts)
    r.at("num_experts_per_tok").fail("needs 1 <= num_experts_per_tok <= num_local_experts");
  m.max_position_embeddings = int_or("max_position_embeddings", 0);
  return m;
}

std::vector<std::string> list_models() {
  std::vector<std::string> names;
  const fs::path dir = data_dir() / "models";
  if (!fs::exists(dir)) return names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace kareus::workload
