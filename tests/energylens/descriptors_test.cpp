// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/descriptors.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "common/error_of.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/paths.hpp"
#include "kareus/energylens/import.hpp"

namespace kareus::energylens {
namespace {

using kareus::testing::error_of;

// The transcribed config.json files are checked against the parameter counts the ML.ENERGY
// leaderboard publishes for the same models (its models.json, the params_b column). Those are
// rounded names ("2" for Gemma 2's 2.6 B, "7" for CodeGemma's 8.5 B), hence the tolerance.
TEST(EnergyLensDescriptors, EveryShippedModelHasAConfigMatchingItsPublishedSize) {
  const auto path = data_dir() / "energylens/mlenergy-v2/mlenergy_v2_llm_configs.csv";
  const ImportResult imported = import_dataset(ImportFormat::kMlenergyV2, path);
  std::ifstream in(path);
  std::string header, line;
  std::getline(in, header);
  std::map<std::string, double> listed;
  while (std::getline(in, line)) {
    // workload,gpu,model,params_b,...: none of the first four fields is quoted.
    std::vector<std::string> f;
    std::size_t pos = 0;
    for (int k = 0; k < 4; ++k) {
      const std::size_t comma = line.find(',', pos);
      f.push_back(line.substr(pos, comma - pos));
      pos = comma + 1;
    }
    listed[f[2]] = std::stod(f[3]) * 1e9;
  }
  ASSERT_EQ(listed.size(), 29u);
  for (const auto& [model, params] : listed) {
    SCOPED_TRACE(model);
    const ModelDescriptors d = model_descriptors(model);
    EXPECT_LE(std::fabs(d.parameters - params), std::max(0.25 * params, 0.7e9));
  }
  for (const Sample& s : imported.data.samples) EXPECT_NO_THROW(gpu_descriptors(s.gpu)) << s.gpu;
}

// A second check from the dataset's own columns: every measured configuration ran, so the BF16
// weights each GPU holds (2 B x N / (TP x PP)) fit in the memory its `gpu` column names
// ("A100-SXM4-40GB", "H100 80GB HBM3"). It catches a config that is too large (a wrong width,
// depth or expert count), which the rounded published sizes catch only beyond 25 %.
TEST(EnergyLensDescriptors, EveryMeasuredConfigurationHoldsItsModelsWeights) {
  const auto path = data_dir() / "energylens/mlenergy-v2/mlenergy_v2_llm_configs.csv";
  const ImportResult imported = import_dataset(ImportFormat::kMlenergyV2, path);
  for (const Sample& s : imported.data.samples) {
    SCOPED_TRACE(s.model + " on " + s.gpu);
    const std::size_t gb = s.gpu.find("GB");
    ASSERT_NE(gb, std::string::npos);
    std::size_t digits = gb;
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(s.gpu[digits - 1]))) --digits;
    const double capacity = std::stod(s.gpu.substr(digits, gb - digits)) * 1e9;
    const double per_gpu = 2.0 * model_descriptors(s.model).parameters / (s.tp * s.pp);
    EXPECT_LT(per_gpu, capacity);
  }
}

TEST(EnergyLensDescriptors, MixtureOfExpertsCountsActiveExperts) {
  const ModelDescriptors d = model_descriptors("mistralai/Mixtral-8x7B-Instruct-v0.1");
  EXPECT_NEAR(d.parameters / 1e9, 46.7, 0.5);
  // Two of eight experts per token (Mixtral paper: 12.9 B active).
  EXPECT_NEAR(d.active_parameters / 1e9, 12.9, 0.3);
  EXPECT_EQ(d.layers, 32.0);
  // 2 (K, V) x 32 layers x 8 KV heads x 128 x 2 bytes.
  EXPECT_EQ(d.kv_bytes_per_token, 131072.0);
}

// sigma, the share of the loaded power a GPU draws at rest (the run-start term's): A100-40GB, 85 W
// static of a 400 W limit (data/gpus).
TEST(EnergyLensDescriptors, IdlePowerShareIsStaticOverLimitPower) {
  EXPECT_NEAR(idle_power_share(gpu_descriptors("a100-sxm4-40gb")), 85.0 / 400.0, 1e-12);
}

TEST(EnergyLensDescriptors, DatasetNamesFindTheCatalogue) {
  EXPECT_EQ(gpu_descriptors("NVIDIA H100 80GB HBM3").name, "h100-sxm");
  EXPECT_EQ(gpu_descriptors("NVIDIA A100-SXM4-40GB").name, "a100-sxm4-40gb");
  EXPECT_EQ(gpu_descriptors("NVIDIA H100 NVL").name, "h100-nvl");
  EXPECT_EQ(model_descriptors("Llama-3.2-3B").config.stem(), "llama3.2-3b");
  const GpuDescriptors h100 = gpu_descriptors("h100-sxm");
  EXPECT_EQ(h100.memory_bandwidth_gbps, 3350.0);
  EXPECT_EQ(h100.power_limit_w, 700.0);
}

// The catalogue is read once per data directory and name: each of evaluate's hundreds of fits looks
// its groups up again. A file changed under a running process is not seen; another data directory
// is.
TEST(EnergyLensDescriptors, TheCatalogueIsReadOncePerDataDirectory) {
  namespace fs = std::filesystem;
  const fs::path shipped = data_dir();
  EXPECT_EQ(gpu_descriptors("h100-sxm").memory_bandwidth_gbps, 3350.0);
  const fs::path other = fs::temp_directory_path() / "kareus_el_other_catalogue";
  fs::remove_all(other);
  fs::create_directories(other / "gpus");
  const auto write_with_bandwidth = [&](const std::string& value) {
    std::ifstream in(shipped / "gpus/h100-sxm.json");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string edited = text;
    const auto field = edited.find("\"memory_bandwidth_gbps\"");
    const std::string shipped_value = "\"value\": 3350,";
    const auto at = edited.find(shipped_value, field);
    if (field != std::string::npos && at != std::string::npos)
      edited.replace(at, shipped_value.size(), "\"value\": " + value + ",");
    ASSERT_NE(edited, text);
    std::ofstream(other / "gpus/h100-sxm.json") << edited;
  };
  write_with_bandwidth("1234");
  const char* before = std::getenv("KAREUS_DATA_DIR");
  const std::string restore = before ? before : "";
  setenv("KAREUS_DATA_DIR", other.c_str(), 1);
  const double first = gpu_descriptors("h100-sxm").memory_bandwidth_gbps;
  write_with_bandwidth("999");
  const double again = gpu_descriptors("h100-sxm").memory_bandwidth_gbps;
  if (before)
    setenv("KAREUS_DATA_DIR", restore.c_str(), 1);
  else
    unsetenv("KAREUS_DATA_DIR");
  fs::remove_all(other);
  EXPECT_EQ(first, 1234.0);
  EXPECT_EQ(again, 1234.0);
  EXPECT_EQ(gpu_descriptors("h100-sxm").memory_bandwidth_gbps, 3350.0);
}

TEST(EnergyLensDescriptors, UnknownNamesAndMissingFieldsAreOneLineErrors) {
  const std::string model = error_of([] { model_descriptors("acme/NoSuchModel-7B"); });
  EXPECT_NE(model.find("acme/NoSuchModel-7B"), std::string::npos) << model;
  EXPECT_NE(model.find("models"), std::string::npos) << model;
  const std::string gpu = error_of([] { gpu_descriptors("NVIDIA B300"); });
  EXPECT_NE(gpu.find("NVIDIA B300"), std::string::npos) << gpu;
  EXPECT_NE(gpu.find("gpus"), std::string::npos) << gpu;

  const auto path = std::filesystem::temp_directory_path() / "kareus_el_no_layers.json";
  std::ofstream(path) << R"({"hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 32000,
                            "intermediate_size": 11008})";
  const std::string field = error_of([&] { model_descriptors(path.string()); });
  EXPECT_NE(field.find("num_hidden_layers"), std::string::npos) << field;
  EXPECT_NE(field.find("kareus_el_no_layers.json"), std::string::npos) << field;
  EXPECT_EQ(std::count(field.begin(), field.end(), '\n'), 0) << field;

  Sample s;
  s.model = "acme/NoSuchModel-7B";
  s.gpu = "h100-sxm";
  s.line = 7;
  DescriptorCache cache;
  const std::string row = error_of([&] { cache.of(s, "rows.csv"); });
  EXPECT_NE(row.find("rows.csv:7"), std::string::npos) << row;
}

}  // namespace
}  // namespace kareus::energylens
