// SPDX-License-Identifier: Apache-2.0
// How the command line spells the library's fields in a message (kareus::Error::message): the
// flag of the command that ran, so that "scale_by = colour" reads "--scale-by = colour".
#pragma once

#include <CLI/CLI.hpp>

#include "kareus/core/error.hpp"

namespace kareus::cli {

// Spells a field as the flag of the subcommand `app` ran that sets it: "--" and the field with
// dashes for underscores ("train_size": "--train-size"), or the few flags named otherwise; a field
// the command has no flag for keeps its library name.
FieldSpeller field_speller(const CLI::App& app);

}  // namespace kareus::cli
