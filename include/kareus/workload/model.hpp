// Transformer model configuration in Hugging Face config.json style.
#pragma once

#include <string>
#include <vector>

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

  // Parameters of one transformer layer (attention + MLP weights; norms are negligible).
  double layer_parameters() const;
  double embedding_parameters() const;
  double total_parameters() const;
};

// Loads data/models/<name>.json or any HF-style config.json path.
ModelConfig load_model(const std::string& name_or_path);
std::vector<std::string> list_models();

}  // namespace kareus::workload
