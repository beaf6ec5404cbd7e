// SPDX-License-Identifier: Apache-2.0
#include "kareus/partition/partition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "kareus/core/error.hpp"

namespace kareus::partition {
namespace {

using workload::Collective;
using workload::Direction;
using workload::Kernel;
using workload::KernelKind;
using workload::SlotClass;

struct Segment {
  std::vector<Kernel> compute;
  std::optional<Kernel> comm;
};

// Cuts the op list into segments of compute ops up to and including the next collective;
// a collective right after another one is fused into the previous segment (one launch, one SM
// allocation), and trailing compute becomes a final segment without a collective.
std::vector<Segment> segments_of(const std::vector<Kernel>& ops) {
  std::vector<Segment> out;
  Segment current;
  for (const Kernel& k : ops) {
    if (!k.is_collective()) {
      current.compute.push_back(k);
      continue;
    }
    if (current.compute.empty() && !out.empty() && out.back().comm) {
      Kernel& fused = *out.back().comm;
      fused.comm_bytes += k.comm_bytes;
      fused.name += "+" + k.name;
      continue;
    }
    current.comm = k;
    out.push_back(std::move(current));
    current = Segment{};
  }
  out.push_back(std::move(current));
  return out;
}

// The linear module a GEMM belongs to ("fc1" for fc1_dgrad and fc1_wgrad).
std::string module_of(const Kernel& k) {
  for (const char* suffix : {"_dgrad", "_wgrad"}) {
    const std::string s = suffix;
    if (k.name.size() > s.size() && k.name.ends_with(s))
      return k.name.substr(0, k.name.size() - s.size());
  }
  return k.name;
}

std::vector<LaunchSlot> slots_of(const std::vector<Kernel>& compute) {
  std::vector<LaunchSlot> slots;
  std::map<std::string, int> counters;
  for (std::size_t i = 0; i < compute.size(); ++i) {
    const Kernel& k = compute[i];
    if (i > 0) {
      const Kernel& prev = compute[i - 1];
      const bool both_memory = k.kind == KernelKind::kMemory && prev.kind == KernelKind::kMemory;
      const bool same_linear = k.kind == KernelKind::kGemm && prev.kind == KernelKind::kGemm &&
                               module_of(k) == module_of(prev);
      if (both_memory || same_linear) continue;
    }
    const std::string cls = workload::to_string(k.slot);
    slots.push_back({fmt::format("{}_{}", cls, counters[cls]++), static_cast<int>(i)});
  }
  return slots;
}

// Whether the segment runs the linear module `module` (forward, or its dgrad/wgrad pair).
bool contains(const std::vector<Kernel>& ops, std::string_view module) {
  return std::any_of(ops.begin(), ops.end(),
                     [&](const Kernel& k) { return module_of(k) == module; });
}

// Names a compute segment after what it computes, as the artifact names them.
std::string compute_name(const std::vector<Kernel>& ops, bool cp_layout) {
  if (contains(ops, "fc1") || contains(ops, "fc2")) return "mlp";
  const bool qkv = contains(ops, "qkv_proj");
  const bool attn = std::any_of(ops.begin(), ops.end(),
                                [](const Kernel& k) { return k.kind == KernelKind::kAttention; });
  const bool out = contains(ops, "out_proj");
  if (!cp_layout && (qkv || attn || out)) return "attn";
  if (qkv) return "qkv";
  if (attn && out) return "ao";
  if (out) return "o";
  if (attn) return "a";
  return "trail";
}

std::string comm_name(const Kernel& k) {
  switch (k.collective) {
    case Collective::kAllReduce:
      return "ar";
    case Collective::kAllGather:
      return "ag";
    case Collective::kReduceScatter:
      return "rs";
    case Collective::kSendRecv:
      return "p2p";
  }
  return "?";
}

}  // namespace

const LaunchSlot* Partition::find_slot(const std::string& name) const {
  for (const auto& s : slots)
    if (s.name == name) return &s;
  return nullptr;
}

void require_nanobatch_split(const workload::Workload& w, const std::string& where) {
  const int mbs = w.parallelism.microbatch_size;
  require(mbs % 2 == 0, where, "microbatch_size", std::to_string(mbs),
          fmt::format("must be even to split each microbatch into two nanobatches (nanobatch "
                      "execution, which nanobatch-perseus and kareus use): set {} to an even "
                      "number, or plan only {} megatron,perseus",
                      field_ref("microbatch_size"), field_ref("methods")));
}

std::vector<Partition> build_partitions(const workload::Workload& w, Direction d, int layers) {
  require_nanobatch_split(w, "workload");
  const double nano = w.parallelism.microbatch_size / 2.0;
  const auto layer = d == Direction::kForward ? workload::layer_forward(w, nano)
                                              : workload::layer_backward(w, nano);
  std::vector<Kernel> ops;
  for (int l = 0; l < layers; ++l) ops.insert(ops.end(), layer.begin(), layer.end());
  const auto segs = segments_of(ops);
  const bool cp_layout = w.parallelism.cp > 1;
  const std::string dir = d == Direction::kForward ? "fwd" : "bwd";

  std::vector<Partition> out;
  for (std::size_t k = 0; k < segs.size(); ++k) {
    const std::string name = compute_name(segs[k].compute, cp_layout);
    const auto slots = slots_of(segs[k].compute);
    for (int nb = 0; nb < 2; ++nb) {
      Partition p;
      p.nanobatch = nb;
      p.compute = segs[k].compute;
      p.slots = slots;
      // NB0 overlaps NB1's previous collective; NB1 overlaps NB0's collective of this segment.
      if (nb == 0 && k > 0) p.comm = segs[k - 1].comm;
      if (nb == 1) p.comm = segs[k].comm;
      if (name == "trail") {
        p.key = p.comm ? dir + "_trail" : "";
        p.fixed = true;
      } else {
        p.key = dir + "_" + name;
        if (cp_layout && name != "mlp" && p.comm) p.key += "_" + comm_name(*p.comm);
      }
      p.launch_options = slots;
      // Launching an AllReduce at the segment's last slot always exposes it (Kareus App. C).
      if (p.comm && p.comm->collective == Collective::kAllReduce && slots.size() > 1)
        p.launch_options.pop_back();
      out.push_back(std::move(p));
    }
  }
  return out;
}

std::vector<Partition> representative_partitions(const workload::Workload& w) {
  std::vector<Partition> reps;
  std::set<std::string> seen;
  for (Direction d : {Direction::kForward, Direction::kBackward}) {
    // Three layers: the middle one has neighbours on both sides, as most layers do.
    const auto parts = build_partitions(w, d, 3);
    const std::size_t per_layer = (parts.size() - 2) / 3;
    for (std::size_t i = per_layer; i < 2 * per_layer; ++i) {
      const auto& p = parts[i];
      if (!p.comm || p.fixed || seen.count(p.key)) continue;
      seen.insert(p.key);
      reps.push_back(p);
    }
    // A key the middle layer lacks: with context parallelism and no tensor parallelism nothing
    // ends a layer's MLP, so the first layer's QKV projection is a segment of its own that later
    // layers fold into the one before. It is still a partition the stage runs.
    for (const auto& p : parts) {
      if (!p.comm || p.fixed || seen.count(p.key)) continue;
      seen.insert(p.key);
      reps.push_back(p);
    }
  }
  return reps;
}

std::vector<std::string> partition_keys(const workload::Workload& w) {
  std::vector<std::string> keys;
  for (const auto& p : representative_partitions(w)) keys.push_back(p.key);
  return keys;
}

}  // namespace kareus::partition
