// SPDX-License-Identifier: Apache-2.0
// Where Kareus finds its catalogue (GPU specs, model configs, workloads) and other shared files.
#pragma once

#include <filesystem>
#include <optional>

namespace kareus {

// <prefix>/share/kareus of the installation the running code belongs to: found next to the
// executable, libkareus.so or the Python extension that holds this function, so an installed tree
// works wherever it was installed (DESTDIR, --prefix, a relocated .deb). Empty when the code runs
// from a build tree.
std::optional<std::filesystem::path> installed_share_dir();

// $KAREUS_DATA_DIR when set, otherwise <prefix>/share/kareus/data of an installed Kareus, otherwise
// the data/ folder of the source tree Kareus was built from.
std::filesystem::path data_dir();

}  // namespace kareus
