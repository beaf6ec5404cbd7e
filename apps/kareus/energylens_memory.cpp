// SPDX-License-Identifier: Apache-2.0
#include "energylens_memory.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "kareus/core/error.hpp"
#include "kareus/energylens/descriptors.hpp"

namespace kareus::cli {

namespace el = kareus::energylens;

std::string config_text(const el::Sample& s) {
  return fmt::format("tp={} pp={} batch={}", format_number(s.tp), format_number(s.pp),
                     format_number(s.batch));
}

namespace {

std::string_view reason_name(el::MemoryLimit limit) {
  switch (limit) {
    case el::MemoryLimit::kWeights:
      return "weights";
    case el::MemoryLimit::kKvCache:
      return "kv_cache";
    case el::MemoryLimit::kNone:
      break;
  }
  return "";
}

std::string verdict_text(const std::optional<el::MemoryFit>& fit) {
  if (!fit) return "";
  switch (fit->limit()) {
    case el::MemoryLimit::kWeights:
      return fmt::format("does not fit: weights {:.1f} > {:.1f} GiB", fit->weights_gib,
                         fit->usable_gib);
    case el::MemoryLimit::kKvCache:
      return fmt::format("does not fit: KV cache {:.0f} < max context {:.0f} tokens",
                         fit->kv_tokens(), *fit->max_context);
    case el::MemoryLimit::kNone:
      break;
  }
  return "";
}

// The first few items, then how many more: a message about hundreds of candidates stays one
// readable line (the JSON names every row).
std::string first_few(const std::vector<std::string>& items, std::string_view separator) {
  constexpr std::size_t kListed = 5;
  const std::size_t listed = std::min(items.size(), kListed);
  return fmt::format(
      "{}{}", fmt::join(items.begin(), items.begin() + static_cast<long>(listed), separator),
      items.size() > listed ? fmt::format("{}and {} more", separator, items.size() - listed) : "");
}

}  // namespace

MemoryChecks check_memory(const el::Dataset& d, std::vector<std::size_t> rows) {
  MemoryChecks checks;
  for (std::size_t r : rows) checks.fits.push_back(el::memory_fit(d.samples[r]));
  checks.rows = std::move(rows);
  return checks;
}

MemoryColumns memory_columns(const el::Dataset& d, const MemoryChecks& checks) {
  MemoryColumns c;
  c.prompt_counted = d.has_input_tokens;
  for (const auto& fit : checks.fits) {
    if (!fit) continue;
    c.concurrency = true;
    c.verdict = c.verdict || !fit->fits();
  }
  return c;
}

std::vector<std::string> with_memory_header(std::vector<std::string> header,
                                            const MemoryColumns& columns) {
  if (columns.concurrency)
    header.push_back(columns.prompt_counted ? "KV seqs" : "KV seqs (output only)");
  if (columns.verdict) header.push_back("memory");
  return header;
}

std::vector<std::string> with_memory(std::vector<std::string> cells, const MemoryColumns& columns,
                                     const std::optional<el::MemoryFit>& fit) {
  if (columns.concurrency)
    cells.push_back(fit ? fmt::format("{:.0f}", fit->kv_concurrency()) : "-");
  if (columns.verdict) cells.push_back(verdict_text(fit));
  return cells;
}

Json memory_json(const std::optional<el::MemoryFit>& fit) {
  if (!fit) return nullptr;
  const el::MemoryLimit limit = fit->limit();
  return Json{{"weights_gib_per_gpu", fit->weights_gib},
              {"usable_gib", fit->usable_gib},
              {"fits", fit->fits()},
              {"reason", limit == el::MemoryLimit::kNone ? Json(nullptr)
                                                         : Json(std::string(reason_name(limit)))},
              {"kv_room_gib_per_gpu", fit->kv_room_gib()},
              {"kv_bytes_per_token_per_gpu", fit->kv_bytes_per_token},
              {"kv_tokens", fit->kv_tokens()},
              {"max_context", fit->max_context ? Json(*fit->max_context) : Json(nullptr)},
              {"kv_sequence_tokens", fit->sequence_tokens},
              {"kv_prompt_counted", fit->prompt_counted},
              {"kv_concurrency", fit->kv_concurrency()},
              {"batch_limited_by_kv", fit->batch_limited_by_kv()}};
}

std::vector<std::string> memory_notes(const el::Dataset& d, const MemoryChecks& checks) {
  if (std::none_of(checks.fits.begin(), checks.fits.end(), [](const auto& f) { return f; }))
    return {};
  std::vector<std::string> notes;
  // Only a config the user gave by path: the catalogue's configs leave the maximum context out on
  // purpose (the shipped datasets' servers ran with shorter contexts than the models' maximum,
  // docs/energylens.md), and a note about them would come with every run on the shipped data.
  std::set<std::string> unbounded;
  for (std::size_t i = 0; i < checks.rows.size(); ++i) {
    const std::string& model = d.samples[checks.rows[i]].model;
    if (checks.fits[i] && !checks.fits[i]->max_context && el::names_config_file(model))
      unbounded.insert(model);
  }
  if (!unbounded.empty())
    notes.push_back(fmt::format(
        "{}: the configs of {} give no max_position_embeddings, so their candidates are not "
        "checked for a KV cache that holds one sequence of the model's maximum context (the "
        "check vLLM starts with); give the server's context in a max_model_len column, or a "
        "config.json that gives it as the model, to have them checked",
        d.source, first_few({unbounded.begin(), unbounded.end()}, ", ")));
  if (!d.has_input_tokens)
    notes.push_back(fmt::format(
        "{}: no input_tokens column, so the KV concurrency counts only each request's output "
        "tokens (half of them in flight on average), not its prompt's",
        d.source));
  return notes;
}

std::string batch_limit_warning(const el::Dataset& d, const MemoryChecks& checks) {
  std::vector<std::string> limited;
  for (std::size_t i = 0; i < checks.rows.size(); ++i) {
    const auto& fit = checks.fits[i];
    if (!fit || !fit->batch_limited_by_kv()) continue;
    const el::Sample& s = d.samples[checks.rows[i]];
    limited.push_back(fmt::format("line {} ({} on {}, {}) runs about {:.0f} at once", s.line,
                                  s.model, s.gpu, config_text(s), fit->kv_concurrency()));
  }
  if (limited.empty()) return "";
  return fmt::format(
      "{}: the KV cache of {} of {} candidates holds fewer requests in flight than their batch, "
      "so vLLM runs fewer at once than configured (their energy is predicted at the configured "
      "batch): {}",
      d.source, limited.size(), checks.rows.size(), first_few(limited, "; "));
}

}  // namespace kareus::cli
