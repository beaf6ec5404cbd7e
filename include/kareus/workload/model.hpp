// SPDX-License-Identifier: Apache-2.0
// Transformer model configuration in Hugging Face config.json style.
#pragma once

#include <string>
#include <vector>

namespace kareus {
class JsonValue;  // kareus/core/json.hpp
}

namespace kareus::workload {

struct ModelConfig {
  std::string name;
  std::string model_type;
  int hidden_size = 0;
  int num_attention_heads = 0;
  int num_key_value_heads = 0;
  int head_dim = 0;
  int intermediate_size = 0;
  int num_hidden_layers = 0;
  int vocab_size = 0;
  bool tie_word_embeddings = false;
  bool gated_mlp = true;  // SwiGLU (Llama, Qwen) vs a plain GELU MLP (GPT)
  bool qk_norm = false;   // Qwen3 normalises q and k per head before rotary
  // Mixture of experts (Mixtral's num_local_experts / num_experts_per_tok); 1 and 1 when dense.
  int experts = 1;
  int experts_per_token = 1;
  // The longest context the model was trained for, which an inference server takes as its
  // default maximum sequence length (vLLM's max_model_len); 0 when the config does not say.
  int max_position_embeddings = 0;

  bool mixture_of_experts() const { return experts > 1; }
  // Parameters of one transformer layer with one MLP (attention + MLP weights; norms are
  // negligible): the dense layer, or a mixture-of-experts layer with a single expert.
  double layer_parameters() const;
  double mlp_parameters() const;  // one MLP (one expert)
  double embedding_parameters() const;
  double total_parameters() const;   // every expert counted
  double active_parameters() const;  // the experts one token runs through
};

// Loads data/models/<name>.json or any HF-style config.json path.
ModelConfig load_model(const std::string& name_or_path);
// The model an HF-style config.json document describes (what load_model reads; fuzz/ feeds it
// bytes). Throws Error naming the field when a size is missing, not a positive int, or
// inconsistent.
ModelConfig model_from_json(const JsonValue& config, std::string name);
std::vector<std::string> list_models();

}  // namespace kareus::workload
