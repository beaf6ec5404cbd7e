// SPDX-License-Identifier: Apache-2.0
// A GPU file as a document: a catalogue file (data/gpus/<name>.json) or a calibrated one
// (`kareus calibrate`), for tools that read its constants one by one, replace some and build the
// GpuSpec of the result. Calibrated files live wherever the user keeps them; the user's catalogue,
// $XDG_CONFIG_HOME/kareus/gpus/ (~/.config/kareus/gpus/), is searched by name.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kareus/core/error.hpp"
#include "kareus/core/json.hpp"
#include "kareus/hardware/gpu_spec.hpp"

namespace kareus {

struct GpuFile {
  std::filesystem::path path;
  Json document;

  std::string name() const;
  // The catalogue GPU the file describes: its name without the "@<digest>" that a calibrated
  // file's name carries.
  std::string model() const;
  // Keys of the sourced numbers ({"value": x, "source": "..."}), in file order; curves excluded.
  std::vector<std::string> constants() const;
  double value(const std::string& key) const;
  std::string source(const std::string& key) const;
  // The GPU the file describes, checked as load_gpu checks a catalogue file.
  GpuSpec spec() const;
  // The same document with some values replaced (sources untouched).
  GpuFile with_values(const std::map<std::string, double>& values) const;
};

// The catalogue GPU a GPU name stands for: "a100-sxm4-40gb@1f0c9a2e", a calibrated file's name
// (the catalogue's with a digest of its fitted values), -> "a100-sxm4-40gb".
std::string gpu_model_of(const std::string& name);

// $XDG_CONFIG_HOME/kareus/gpus, or ~/.config/kareus/gpus without XDG_CONFIG_HOME.
std::filesystem::path user_gpu_dir();

// The file of a GPU in the user's catalogue: <dir>/<name>.json, or the file there whose "name"
// is `name`; nullopt when there is none.
std::optional<std::filesystem::path> find_user_gpu(const std::string& name);

// A catalogue name, a .json path, or a name in the user's catalogue. Throws Error naming `field`
// when none exists.
GpuFile read_gpu_file(const std::string& name_or_path, const std::string& field = field_ref("gpu"));

}  // namespace kareus
