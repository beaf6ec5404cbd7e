// SPDX-License-Identifier: Apache-2.0
#include "kareus/plan_dir/plan_files.hpp"

#include <fmt/format.h>

#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/text_file.hpp"

namespace kareus::plan_dir {

namespace fs = std::filesystem;

std::string frontier_file(std::string_view method) {
  return fmt::format("frontier_{}.csv", method);
}

bool is_plan_file(std::string_view name) {
  return name == kSchedule || name == kSummary || name == kPartitions ||
         (name.starts_with("frontier_") && name.ends_with(".csv"));
}

std::string written_by() {
  return fmt::format("{} holds it", field_ref("plan_dir"));
}

const std::string& PlanFiles::text(const std::string& name, std::string_view why) const {
  const auto it = texts.find(name);
  if (it == texts.end())
    throw Error(fmt::format("{}: not found; {}", source(name),
                            why.empty() ? written_by() : std::string(why)));
  return it->second;
}

std::string PlanFiles::source(const std::string& name) const {
  return (dir / name).string();
}

PlanFiles read_plan_files(const fs::path& dir) {
  if (!fs::is_directory(dir))
    throw Error(fmt::format("{}: not a directory; give {}", dir.string(), field_ref("plan_dir")));
  PlanFiles files{dir, {}};
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (is_plan_file(name) && entry.is_regular_file())
      files.texts.emplace(name, read_text_file(entry.path()));
  }
  return files;
}

void write_plan_files(const PlanFiles& files, const fs::path& dir) {
  for (const auto& [name, text] : files.texts) write_file_atomically(dir / name, text);
}

}  // namespace kareus::plan_dir
