// SPDX-License-Identifier: Apache-2.0
// Converters from public measurement datasets to the canonical EnergyLens CSV. Each keeps every
// input row (a row it cannot convert is an error, never skipped) and states in `notes` what it
// derived and how the prefill term is handled, since neither dataset reports input tokens.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kareus/core/csv.hpp"
#include "kareus/energylens/dataset.hpp"

namespace kareus::energylens {

enum class ImportFormat { kMlenergyV2, kTokenpowerbench };

ImportFormat parse_import_format(std::string_view text);
const char* to_string(ImportFormat format);

// The public dataset whose columns `table` has, if any, unless it has the canonical CSV's scenario
// column: a raw file given where the canonical CSV belongs gets a message naming the import that
// converts it.
std::optional<ImportFormat> raw_format_of(const CsvTable& table);

struct ImportResult {
  Dataset data;
  std::size_t rows_read = 0;
  std::vector<std::string> notes;
};

// `in` is the dataset's flattened CSV (mlenergy_v2_llm_configs.csv or
// tokenpowerbench_upstream_runs.csv, see each dataset's README).
ImportResult import_dataset(ImportFormat format, const std::filesystem::path& in);

}  // namespace kareus::energylens
