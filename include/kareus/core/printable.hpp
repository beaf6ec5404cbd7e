// SPDX-License-Identifier: Apache-2.0
// Text from a file or a device made safe to show on a terminal. A GPU name, a kernel name or a
// scenario can hold any bytes; written raw, ESC and OSC sequences would drive the user's terminal
// and bidirectional overrides would make a value read backwards.
#pragma once

#include <string>
#include <string_view>

namespace kareus {

// `text` with every byte a terminal would act on written as an escape: control bytes but tab
// (newlines included) and bytes that are not UTF-8 as \xNN; C1 controls, the line and paragraph
// separators and the bidirectional formatting characters as \uNNNN. Other UTF-8 (ü, ×, ≤) stays.
std::string printable(std::string_view text);

}  // namespace kareus
