// SPDX-License-Identifier: Apache-2.0
// What `energylens predict` and `select` print of the memory check (memory_fit.hpp): the table's
// KV concurrency and memory columns, each row's JSON `memory` object, and the notes that say what
// the check could not count or found limiting.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kareus/core/json.hpp"
#include "kareus/energylens/dataset.hpp"
#include "kareus/energylens/memory_fit.hpp"

namespace kareus::cli {

// "tp=2 pp=1 batch=64".
std::string config_text(const energylens::Sample& s);

// The memory checks of the candidates a command shows, made once (select's ranking has them
// already): fits[i] is rows[i]'s, absent when the catalogues cannot tell.
struct MemoryChecks {
  std::vector<std::size_t> rows;
  std::vector<std::optional<energylens::MemoryFit>> fits;
};
MemoryChecks check_memory(const energylens::Dataset& d, std::vector<std::size_t> rows);

// Which memory columns a table of the checked rows has: the KV concurrency when some row is
// checked, the memory verdict when some row does not fit.
struct MemoryColumns {
  bool concurrency = false;
  bool verdict = false;
  bool prompt_counted = false;  // the rows give input_tokens
};
MemoryColumns memory_columns(const energylens::Dataset& d, const MemoryChecks& checks);
std::vector<std::string> with_memory_header(std::vector<std::string> header,
                                            const MemoryColumns& columns);
std::vector<std::string> with_memory(std::vector<std::string> cells, const MemoryColumns& columns,
                                     const std::optional<energylens::MemoryFit>& fit);

// Null when the catalogues cannot tell.
Json memory_json(const std::optional<energylens::MemoryFit>& fit);

// One line each, for stderr (or the JSON's notes): the models whose config gives no maximum
// context (not checked against it), rows without input_tokens (only the output counted).
std::vector<std::string> memory_notes(const energylens::Dataset& d, const MemoryChecks& checks);
// One line naming every row whose batch the KV cache cuts and the batch it runs at; empty when
// none is.
std::string batch_limit_warning(const energylens::Dataset& d, const MemoryChecks& checks);

}  // namespace kareus::cli
