// SPDX-License-Identifier: Apache-2.0
// What the scale term of the energy model knows about a row's model and GPU: descriptors read
// from the model's Hugging Face config.json (data/models/) and the GPU catalogue (data/gpus/),
// so that a (model, GPU) pair never measured is still predicted from what it is, not from an
// average of the pairs that were.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "kareus/energylens/closed_form.hpp"
#include "kareus/energylens/dataset.hpp"

namespace kareus::energylens {

struct ModelDescriptors {
  std::filesystem::path config;
  double parameters = 0.0;         // all weights
  double active_parameters = 0.0;  // weights one token passes through (MoE: top-k experts)
  double layers = 0.0;
  double kv_heads = 0.0;
  double kv_bytes_per_token = 0.0;  // K and V of one token over all layers, 16-bit
  // The config's max_position_embeddings, vLLM's default max_model_len; 0 when it has none.
  double max_context = 0.0;
};

struct GpuDescriptors {
  std::string name;  // catalogue name
  double memory_bandwidth_gbps = 0.0;
  double power_limit_w = 0.0;  // the default limit
  double static_power_w = 0.0;
  double memory_capacity_gib = 0.0;
};

// A dataset's model name -> data/models/<name>.json, matched on the part after the last '/'
// ignoring case, '-' and '_' (so "meta-llama/Llama-3.2-3B" finds llama3.2-3b.json); a path to a
// config.json is read as is. Unknown name or missing field: Error naming file, field and value.
ModelDescriptors model_descriptors(const std::string& model);
// Whether a row's model is the path of a config.json (read as is) rather than a catalogue name.
bool names_config_file(const std::string& model);
// A dataset's GPU name -> data/gpus/<name>.json, matched on the catalogue name or on the
// display name without its parenthesis ("NVIDIA H100 80GB HBM3" finds h100-sxm), ignoring case.
GpuDescriptors gpu_descriptors(const std::string& gpu);

// The logarithms the scale term is linear in (docs/energylens.md, "Descriptor scale").
enum ScaleTerm : std::size_t { log_params, log_active_params, log_kv_bytes, log_joules_per_byte };
inline constexpr std::size_t kScaleTerms = kDescriptorValues;
using ScaleVector = std::array<double, kScaleTerms>;
std::string_view scale_term_name(std::size_t term);
std::string_view scale_term_meaning(std::size_t term);

ScaleVector scale_vector(const ModelDescriptors& m, const GpuDescriptors& g);
// sigma, the GPU's static over limit power: the share of its loaded power it draws at rest, which
// the run-start term's rising share is made of (closed_form.hpp).
double idle_power_share(const GpuDescriptors& g);

// Looks every (model, GPU) of a run up once. A row without a model or GPU name, or one the
// catalogues do not know, is an Error naming the row's line.
class DescriptorCache {
 public:
  const ScaleVector& of(const Sample& s, std::string_view source);
  double idle_power_share(const Sample& s, std::string_view source);

 private:
  void look_up(const Sample& s, std::string_view source);

  std::map<std::string, ModelDescriptors> models_;
  std::map<std::string, GpuDescriptors> gpus_;
  std::map<std::pair<std::string, std::string>, ScaleVector> vectors_;
  std::map<std::pair<std::string, std::string>, double> idle_shares_;
};

// Fills every row's Sample::descriptors (what symbolic regression searches over), with
// require_descriptors()'s errors.
void attach_descriptors(Dataset& data);

// Looks up every row of `data`, so that a run stops on the first row the catalogues cannot
// describe (naming data.source and the line) before it fits or prints anything.
void require_descriptors(const Dataset& data);

}  // namespace kareus::energylens
