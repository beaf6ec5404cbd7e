// Where Kareus finds its catalogue (GPU specs, model configs, workloads).
#pragma once

#include <filesystem>

namespace kareus {

// $KAREUS_DATA_DIR when set, otherwise the data/ folder of the source tree Kareus was built from.
std::filesystem::path data_dir();

}  // namespace kareus
