// SPDX-License-Identifier: Apache-2.0
// The nearest valid name to one a person typed, for "did you mean ...?" in messages about unknown
// flags, commands, models and GPUs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kareus {

// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
// neighbours each cost 1 ("plna" is one swap from "plan").
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `typed`, when it is close enough to be a slip of the keyboard: at most
// a third of its length (and at least 1) edits away; empty otherwise. Leading dashes are ignored
// on both sides, so "-microbatches" is one slip from "--microbatches"; the first of equally near
// candidates wins.
std::string nearest_name(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace kareus
