// SPDX-License-Identifier: Apache-2.0
// Does symbolic regression recover the hand-written closed form? The closed form (closed_form.hpp;
// with descriptors, times the descriptor scale term) is fitted to the same rows, with the same
// per-group multipliers as discovery, and compared with each member of the Pareto front by fit
// quality and by what the two predict row by row. Equal fit alone is not enough (two different
// forms can fit noisy data alike); equal predictions alone neither (both may miss the data).
#pragma once

#include "kareus/energylens/dataset.hpp"
#include "kareus/energylens/symbolic.hpp"

namespace kareus::energylens {

// Two fits count as the same form when neither's RMS relative error exceeds the other's by more
// than this share (plus kRecoveryFloor), and their predictions differ by at most the closed
// form's own RMS error (at least kRecoveryFloor): i.e. less than the noise it leaves.
inline constexpr double kRecoveryTolerance = 0.25;
inline constexpr double kRecoveryFloor = 0.01;

// `rows` must carry descriptors when `options.descriptors` (discover() attaches them).
RecoveryVerdict compare_with_closed_form(const Dataset& rows, const DiscoverResult& result,
                                         const DiscoverOptions& options);

}  // namespace kareus::energylens
