#include "kareus/workload/workload.hpp"

#include <fmt/format.h>

#include <numeric>

#include "kareus/core/error.hpp"

namespace kareus::workload {

const char* to_string(Recompute r) {
  return r == Recompute::kFull ? "full" : "none";
}

int Workload::total_gpus() const {
  const auto& p = parallelism;
  return p.tp * p.cp * p.pp * p.dp;
}

std::vector<int> Workload::stage_layers() const {
  if (!parallelism.layer_split.empty()) return parallelism.layer_split;
  const int layers = model.num_hidden_layers;
  const int pp = parallelism.pp;
  // The last stage also runs the output layer and the loss, worth about one layer: split L + 1
  // units as evenly as possible (earlier stages take the extras) and give the last stage one
  // layer less. This reproduces the paper's 15/13 split of 28 layers over two stages.
  const int units = layers + 1;
  std::vector<int> split(pp);
  for (int s = 0; s < pp; ++s) split[s] = units / pp + (s < units % pp ? 1 : 0);
  split.back() -= 1;
  if (pp > 1 && split.back() >= 1) return split;
  for (int s = 0; s < pp; ++s) split[s] = layers / pp + (s < layers % pp ? 1 : 0);
  return split;
}

double Workload::tokens_per_microbatch() const {
  return static_cast<double>(parallelism.microbatch_size) * parallelism.sequence_length /
         parallelism.cp;
}

bool Workload::pipeline_crosses_nodes() const {
  return gpus_per_stage() >= parallelism.gpus_per_node;
}

bool Workload::data_parallel_crosses_nodes() const {
  return gpus_per_stage() * parallelism.pp >= parallelism.gpus_per_node ||
         gpus_per_stage() * parallelism.dp > parallelism.gpus_per_node;
}

Json Workload::to_json() const {
  const auto& p = parallelism;
  return Json{{"model", model.name},
              {"gpu", gpu.name},
              {"parallelism",
               {{"tp", p.tp},
                {"cp", p.cp},
                {"pp", p.pp},
                {"dp", p.dp},
                {"microbatch_size", p.microbatch_size},
                {"sequence_length", p.sequence_length},
                {"microbatches", p.microbatches},
                {"recompute", to_string(p.recompute)},
                {"layer_split", stage_layers()},
                {"gpus_per_node", p.gpus_per_node}}},
              {"gpus", total_gpus()}};
}

Recompute parse_recompute(const std::string& text, const std::string& where) {
  if (text == "full") return Recompute::kFull;
  if (text == "none") return Recompute::kNone;
  throw Error::invalid(where, "recompute", text, "allowed: full, none");
}

Workload make_workload(const WorkloadRequest& request) {
  const auto& p = request.parallelism;
  const std::string& w = request.where;
  auto positive = [&](int v, const char* field) {
    require(v > 0, w, field, std::to_string(v), "must be a positive integer");
  };
  positive(p.tp, "tp");
  positive(p.cp, "cp");
  positive(p.pp, "pp");
  positive(p.dp, "dp");
  positive(p.microbatch_size, "microbatch_size");
  positive(p.sequence_length, "sequence_length");
  positive(p.microbatches, "microbatches");
  positive(p.gpus_per_node, "gpus_per_node");

  Workload wl{load_model(request.model), load_gpu(request.gpu), p};
  const auto& m = wl.model;
  require(m.num_attention_heads % p.tp == 0, w, "tp", std::to_string(p.tp),
          fmt::format("must divide num_attention_heads ({}) of {}", m.num_attention_heads, m.name));
  require(m.num_key_value_heads % p.tp == 0 || p.tp % m.num_key_value_heads == 0, w, "tp",
          std::to_string(p.tp),
          fmt::format("must divide num_key_value_heads ({}) or be a multiple of it",
                      m.num_key_value_heads));
  require(p.sequence_length % (2 * p.cp) == 0 || p.cp == 1, w, "sequence_length",
          std::to_string(p.sequence_length),
          fmt::format("must be divisible by 2 x cp = {} (load-balanced context parallelism)",
                      2 * p.cp));
  require(p.pp <= m.num_hidden_layers, w, "pp", std::to_string(p.pp),
          fmt::format("must not exceed the number of layers ({})", m.num_hidden_layers));
  require(p.tp * p.cp <= p.gpus_per_node, w, "tp x cp", std::to_string(p.tp * p.cp),
          fmt::format("must fit in one node of {} GPUs (tensor and context parallelism use "
                      "NVLink)",
                      p.gpus_per_node));
  if (!p.layer_split.empty()) {
    require(static_cast<int>(p.layer_split.size()) == p.pp, w, "layer_split",
            std::to_string(p.layer_split.size()) + " stages",
            fmt::format("must list one layer count per pipeline stage ({})", p.pp));
    const int sum = std::accumulate(p.layer_split.begin(), p.layer_split.end(), 0);
    require(sum == m.num_hidden_layers, w, "layer_split", std::to_string(sum) + " layers",
            fmt::format("must add up to num_hidden_layers ({})", m.num_hidden_layers));
    for (int l : p.layer_split)
      require(l > 0, w, "layer_split", std::to_string(l), "every stage needs at least one layer");
  }
  return wl;
}

WorkloadRequest read_workload_request(const std::string& path) {
  const auto doc = JsonDocument::load_file(path);
  return workload_request_from_json(doc.root(), path);
}

WorkloadRequest workload_request_from_json(const JsonValue& r, const std::string& where) {
  WorkloadRequest req;
  req.where = where;
  req.model = r.string("model");
  req.gpu = r.string("gpu");
  const JsonValue par = r.at("parallelism");
  auto get = [&](const char* key, int fallback) {
    return static_cast<int>(par.contains(key) ? par.at(key).as_positive_integer() : fallback);
  };
  auto& p = req.parallelism;
  p.tp = get("tp", 1);
  p.cp = get("cp", 1);
  p.pp = get("pp", 1);
  p.dp = get("dp", 1);
  p.microbatch_size = static_cast<int>(par.at("microbatch_size").as_positive_integer());
  p.sequence_length = static_cast<int>(par.at("sequence_length").as_positive_integer());
  p.microbatches = static_cast<int>(par.at("microbatches").as_positive_integer());
  p.gpus_per_node = get("gpus_per_node", 8);
  if (auto rc = par.find("recompute")) {
    const std::string text = rc->as_string();
    if (text != "full" && text != "none") rc->fail("allowed: full, none");
    p.recompute = text == "full" ? Recompute::kFull : Recompute::kNone;
  }
  if (auto split = par.find("layer_split")) {
    for (std::size_t i = 0; i < split->size(); ++i)
      p.layer_split.push_back(static_cast<int>(split->at(i).as_positive_integer()));
  }
  return req;
}

}  // namespace kareus::workload
