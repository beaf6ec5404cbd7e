// SPDX-License-Identifier: Apache-2.0
// One model, every spelling of its name: the catalogue's files and the names people and data sets
// use ("Llama-3.2-3B", "llama-3.2-3b", ML.ENERGY's "meta-llama/Meta-Llama-3.1-8B-Instruct") meet
// in one key.
#pragma once

#include <string>
#include <string_view>

namespace kareus::workload {

// What every spelling of one model name shares: lower case, without '-', '_' and spaces, so
// "Llama-3.2-3B", "llama-3.2-3b" and "llama3.2-3b" are one name.
std::string model_name_key(std::string_view name);

}  // namespace kareus::workload
