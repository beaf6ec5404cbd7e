// SPDX-License-Identifier: Apache-2.0
#include "kareus/hardware/gpu_file.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <system_error>

#include "kareus/core/error.hpp"
#include "kareus/core/paths.hpp"

namespace kareus {
namespace fs = std::filesystem;

namespace {

const Json& field(const GpuFile& f, const std::string& key) {
  const auto it = f.document.find(key);
  if (it == f.document.end() || !it->is_object() || !it->contains("value"))
    throw Error::invalid(f.path.string(), key, "(missing)",
                         "not a sourced number of this GPU file");
  return *it;
}

bool is_sourced_number(const Json& v) {
  return v.is_object() && v.contains("value") && v.at("value").is_number() && v.contains("source");
}

std::optional<std::string> name_in(const fs::path& file) {
  try {
    return JsonDocument::load_file(file).root().string("name");
  } catch (const Error&) {
    return std::nullopt;  // not a GPU file; the user's folder may hold anything
  }
}

}  // namespace

std::string GpuFile::name() const {
  return document.value("name", std::string());
}

std::string gpu_model_of(const std::string& name) {
  return name.substr(0, name.find('@'));
}

std::string GpuFile::model() const {
  return gpu_model_of(name());
}

std::vector<std::string> GpuFile::constants() const {
  std::vector<std::string> keys;
  for (const auto& [key, v] : document.items())
    if (is_sourced_number(v)) keys.push_back(key);
  return keys;
}

double GpuFile::value(const std::string& key) const {
  return field(*this, key).at("value").get<double>();
}

std::string GpuFile::source(const std::string& key) const {
  return field(*this, key).value("source", std::string());
}

GpuSpec GpuFile::spec() const {
  return gpu_from_document(JsonDocument::parse(document.dump(), path.string()).root());
}

GpuFile GpuFile::with_values(const std::map<std::string, double>& values) const {
  GpuFile out = *this;
  for (const auto& [key, v] : values) {
    field(*this, key);
    out.document[key]["value"] = v;
  }
  return out;
}

fs::path user_gpu_dir() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg)
    return fs::path(xdg) / "kareus" / "gpus";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : ".") / ".config" / "kareus" / "gpus";
}

std::optional<fs::path> find_user_gpu(const std::string& name) {
  const fs::path dir = user_gpu_dir();
  std::error_code ec;
  if (name.empty() || name.find('/') != std::string::npos || !fs::is_directory(dir, ec))
    return std::nullopt;
  if (const fs::path direct = dir / (name + ".json"); fs::is_regular_file(direct, ec))
    return direct;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json" && name_in(entry.path()) == name) return entry.path();
  return std::nullopt;
}

GpuFile read_gpu_file(const std::string& name_or_path, const std::string& field) {
  fs::path path = name_or_path;
  std::error_code ec;
  if (path.extension() != ".json") {
    if (const fs::path catalogue = data_dir() / "gpus" / (name_or_path + ".json");
        fs::is_regular_file(catalogue, ec))
      path = catalogue;
    else if (auto user = find_user_gpu(name_or_path))
      path = *user;
  }
  if (!fs::is_regular_file(path, ec))
    throw Error::invalid("command line", field, name_or_path,
                         fmt::format("no such GPU file: give a .json path, a catalogue name "
                                     "(kareus gpus) or a name in {}",
                                     user_gpu_dir().string()));
  GpuFile f{path, JsonDocument::load_file(path).raw()};
  f.spec();  // refuses a file that is no GPU file before anyone uses it
  return f;
}

}  // namespace kareus
