// SPDX-License-Identifier: Apache-2.0
#include "kareus/workload/workload.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <numeric>

#include "kareus/core/error.hpp"
#include "kareus/workload/memory.hpp"
#include "kareus/workload/pipeline.hpp"

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

namespace {

// load_model and load_gpu name the value they refuse, not the workload file it came from.
template <class Load>
auto naming_where(const std::string& where, std::string_view field, Load load) {
  try {
    return load();
  } catch (const Error& e) {
    const std::string_view message = e.what();
    if (e.kind() != ErrorKind::kInvalidInput || !message.starts_with(fmt::format("{} = ", field)))
      throw;
    throw Error(fmt::format("{}: {}", where, message), e.kind());
  }
}

}  // namespace

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

  // Products of the degrees and sizes are ints downstream; refuse what would overflow them
  // instead of planning a wrapped-around workload. 2^24 GPUs is far beyond any cluster.
  constexpr std::int64_t kMaxGpus = std::int64_t{1} << 24;
  const std::int64_t gpus = std::int64_t{p.tp} * p.cp * p.pp * p.dp;
  require(gpus <= kMaxGpus, w, "tp x cp x pp x dp", std::to_string(gpus),
          fmt::format("must be at most {} GPUs", kMaxGpus));
  // The emulator and the planner hold every instruction of the iteration.
  workload::require_instruction_count(p.pp, p.microbatches, w, "microbatches");
  const std::int64_t tokens = std::int64_t{p.microbatch_size} * p.sequence_length;
  require(tokens <= std::numeric_limits<int>::max(), w, "microbatch_size x sequence_length",
          std::to_string(tokens),
          fmt::format("must be at most {} tokens", std::numeric_limits<int>::max()));
  Workload wl{naming_where(w, "model", [&] { return load_model(request.model); }),
              naming_where(w, "gpu", [&] { return load_gpu(request.gpu); }), p};
  const auto& m = wl.model;
  // Planning an MoE as its dense shell would drop the expert MLPs and the all-to-all, a plan
  // several times off without a word; EnergyLens reads MoE configs through its own descriptors.
  require(!m.mixture_of_experts(), w, "model", m.name,
          fmt::format("a mixture of experts ({} experts, {} per token): the training planner "
                      "models dense transformers only (no expert layers, no all-to-all)",
                      m.experts, m.experts_per_token));
  require(m.num_attention_heads % p.tp == 0, w, "tp", std::to_string(p.tp),
          fmt::format("must divide num_attention_heads ({}) of {}", m.num_attention_heads, m.name));
  require(m.num_key_value_heads % p.tp == 0 || p.tp % m.num_key_value_heads == 0, w, "tp",
          std::to_string(p.tp),
          fmt::format("must divide num_key_value_heads ({}) or be a multiple of it",
                      m.num_key_value_heads));
  require(p.cp == 1 || p.sequence_length % (2 * std::int64_t{p.cp}) == 0, w, "sequence_length",
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
  if (request.training_job) require_model_states_fit(wl, w);
  return wl;
}

WorkloadRequest read_workload_request(const std::string& path) {
  const auto doc = JsonDocument::load_file(path);
  return workload_request_from_json(doc.root(), path);
}

WorkloadRequest workload_request_from_json(const JsonValue& r, const std::string& where) {
  WorkloadRequest req;
  req.where = where;
  r.reject_unknown_keys({"model", "gpu", "parallelism", "gpus"}, true);
  req.model = r.string("model");
  req.gpu = r.string("gpu");
  const JsonValue par = r.at("parallelism");
  par.reject_unknown_keys({"tp", "cp", "pp", "dp", "microbatch_size", "sequence_length",
                           "microbatches", "recompute", "layer_split", "gpus_per_node"},
                          true);
  auto get = [&](const char* key, int fallback) {
    return par.contains(key) ? par.at(key).as_positive_int() : fallback;
  };
  auto& p = req.parallelism;
  p.tp = get("tp", 1);
  p.cp = get("cp", 1);
  p.pp = get("pp", 1);
  p.dp = get("dp", 1);
  p.microbatch_size = par.at("microbatch_size").as_positive_int();
  p.sequence_length = par.at("sequence_length").as_positive_int();
  p.microbatches = par.at("microbatches").as_positive_int();
  p.gpus_per_node = get("gpus_per_node", 8);
  // Workload::to_json writes the GPU count; a file that states one must agree with its degrees.
  if (auto gpus = r.find("gpus")) {
    const std::int64_t total = std::int64_t{p.tp} * p.cp * p.pp * p.dp;
    if (gpus->as_positive_integer() != total)
      gpus->fail(fmt::format("must equal tp x cp x pp x dp = {}", total));
  }
  if (auto rc = par.find("recompute")) {
    const std::string text = rc->as_string();
    if (text != "full" && text != "none") rc->fail("allowed: full, none");
    p.recompute = text == "full" ? Recompute::kFull : Recompute::kNone;
  }
  if (auto split = par.find("layer_split")) {
    for (std::size_t i = 0; i < split->size(); ++i)
      p.layer_split.push_back(split->at(i).as_positive_int());
  }
  return req;
}

}  // namespace kareus::workload
