// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/descriptors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <mutex>

#include "kareus/core/error.hpp"
#include "kareus/core/paths.hpp"
#include "kareus/hardware/gpu_spec.hpp"
#include "kareus/workload/model.hpp"
#include "kareus/workload/model_name.hpp"

namespace kareus::energylens {
namespace fs = std::filesystem;
namespace {

// Lower case without '-', '_' and spaces: the spelling differences between dataset names and
// catalogue file names.
std::string squash(std::string_view text) {
  std::string out;
  for (char c : text)
    if (c != '-' && c != '_' && c != ' ')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

fs::path find_model_config(const std::string& model) {
  if (names_config_file(model)) return model;
  const std::string key = workload::model_name_key(model.substr(model.rfind('/') + 1));
  for (const auto& name : workload::list_models())
    if (workload::model_name_key(name) == key) return data_dir() / "models" / (name + ".json");
  throw Error::invalid("", "model", model,
                       fmt::format("no config for it in {} (add the model's Hugging Face "
                                   "config.json there as <name>.json)",
                                   (data_dir() / "models").string()));
}

// Every fit (each of a bag's, each split's) looks its groups up again, and reading and parsing
// the catalogue's files each time was about half of `energylens evaluate`'s CPU. The catalogue
// does not change while a process runs, so what a name gave is kept per data directory (a
// failure is not kept: it throws every time). An explicit config path is read each time.
template <class Descriptors, class Read>
Descriptors remembered(const std::string& name, Read read) {
  static std::mutex lock;
  static std::map<std::pair<std::string, std::string>, Descriptors> known;
  const auto key = std::make_pair(data_dir().string(), name);
  {
    const std::scoped_lock hold(lock);
    if (const auto it = known.find(key); it != known.end()) return it->second;
  }
  Descriptors d = read(name);
  const std::scoped_lock hold(lock);
  return known.emplace(key, std::move(d)).first->second;
}

ModelDescriptors read_model_descriptors(const std::string& model) {
  ModelDescriptors d;
  d.config = find_model_config(model);
  const workload::ModelConfig c = workload::load_model(d.config.string());
  d.parameters = c.total_parameters();
  d.active_parameters = c.active_parameters();
  d.layers = c.num_hidden_layers;
  d.kv_heads = c.num_key_value_heads;
  // K and V (2) of every layer and KV head, 2 B each: vLLM's default kv_cache_dtype "auto" keeps
  // the cache in the model's dtype, BF16 here.
  d.kv_bytes_per_token = 2.0 * d.layers * c.num_key_value_heads * c.head_dim * 2.0;
  d.max_context = c.max_position_embeddings;
  return d;
}

GpuDescriptors read_gpu_descriptors(const std::string& gpu) {
  const std::string key = squash(gpu);
  for (const auto& name : list_gpus()) {
    const GpuSpec g = load_gpu(name);
    const std::string display = g.display_name.substr(0, g.display_name.find(" ("));
    if (squash(name) != key && squash(display) != key) continue;
    return {name, g.memory_bandwidth_gbps, g.power_limit_default.value(), g.static_power.value(),
            g.memory_capacity_gib};
  }
  throw Error::invalid("", "gpu", gpu,
                       fmt::format("not in the GPU catalogue {} (by name or display name)",
                                   (data_dir() / "gpus").string()));
}

}  // namespace

bool names_config_file(const std::string& model) {
  return fs::path(model).extension() == ".json";
}

ModelDescriptors model_descriptors(const std::string& model) {
  if (names_config_file(model)) return read_model_descriptors(model);
  return remembered<ModelDescriptors>(model, read_model_descriptors);
}

GpuDescriptors gpu_descriptors(const std::string& gpu) {
  return remembered<GpuDescriptors>(gpu, read_gpu_descriptors);
}

std::string_view scale_term_name(std::size_t term) {
  static constexpr std::array<std::string_view, kScaleTerms> names = {"k_params", "k_active",
                                                                      "k_kv", "k_jpb"};
  return names.at(term);
}

std::string_view scale_term_meaning(std::size_t term) {
  static constexpr std::array<std::string_view, kScaleTerms> meanings = {
      "exponent of energy in all parameters (weights read per step, /1e9)",
      "exponent in active parameters (weights a token computes with, /1e9)",
      "exponent in KV-cache bytes per token (/1e6)",
      "exponent in J per byte streamed (power limit W / HBM bandwidth GB/s)"};
  return meanings.at(term);
}

ScaleVector scale_vector(const ModelDescriptors& m, const GpuDescriptors& g) {
  // Reference points (1e9 parameters, 1 MB of KV per token, 1 J/GB) keep the intercept a
  // readable energy and the terms of order 1.
  ScaleVector v{};
  v[log_params] = std::log(m.parameters / 1e9);
  v[log_active_params] = std::log(m.active_parameters / 1e9);
  v[log_kv_bytes] = std::log(m.kv_bytes_per_token / 1e6);
  // J per byte streamed at the power limit: what moving the weights once costs on this GPU.
  v[log_joules_per_byte] = std::log(g.power_limit_w / g.memory_bandwidth_gbps);
  return v;
}

double idle_power_share(const GpuDescriptors& g) {
  return g.static_power_w / g.power_limit_w;
}

void DescriptorCache::look_up(const Sample& s, std::string_view source) {
  const std::string where = fmt::format("{}:{}", source, s.line);
  if (s.model.empty())
    throw Error::invalid(where, "model", "",
                         fmt::format("the descriptor scale needs a model name per row (a `model` "
                                     "column), or pass {} off",
                                     field_ref("descriptors")));
  if (s.gpu.empty())
    throw Error::invalid(where, "gpu", "",
                         fmt::format("the descriptor scale needs a GPU name per row (a `gpu` "
                                     "column), or pass {} off",
                                     field_ref("descriptors")));
  try {
    if (!models_.contains(s.model)) models_[s.model] = model_descriptors(s.model);
    if (!gpus_.contains(s.gpu)) gpus_[s.gpu] = gpu_descriptors(s.gpu);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", where, e.what()), e.kind());
  }
  const auto key = std::make_pair(s.model, s.gpu);
  vectors_[key] = scale_vector(models_.at(s.model), gpus_.at(s.gpu));
  idle_shares_[key] = energylens::idle_power_share(gpus_.at(s.gpu));
}

const ScaleVector& DescriptorCache::of(const Sample& s, std::string_view source) {
  const auto key = std::make_pair(s.model, s.gpu);
  if (!vectors_.contains(key)) look_up(s, source);
  return vectors_.at(key);
}

double DescriptorCache::idle_power_share(const Sample& s, std::string_view source) {
  const auto key = std::make_pair(s.model, s.gpu);
  if (!idle_shares_.contains(key)) look_up(s, source);
  return idle_shares_.at(key);
}

void attach_descriptors(Dataset& data) {
  DescriptorCache cache;
  for (Sample& s : data.samples) {
    const ScaleVector& x = cache.of(s, data.source);
    for (std::size_t j = 0; j < kScaleTerms; ++j) s.descriptors[j] = std::exp(x[j]);
  }
}

void require_descriptors(const Dataset& data) {
  DescriptorCache cache;
  for (const Sample& s : data.samples) cache.of(s, data.source);
}

}  // namespace kareus::energylens
