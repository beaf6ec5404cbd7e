#include "kareus/core/paths.hpp"

#include <cstdlib>

namespace kareus {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("KAREUS_DATA_DIR"); env != nullptr && *env != '\0')
    return env;
  return KAREUS_DEFAULT_DATA_DIR;
}

}  // namespace kareus
