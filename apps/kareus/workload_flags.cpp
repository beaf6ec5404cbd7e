// SPDX-License-Identifier: Apache-2.0
#include "workload_flags.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "kareus/core/error.hpp"
#include "kareus/core/printable.hpp"
#include "kareus/hardware/gpu_file.hpp"
#include "kareus/workload/memory.hpp"

namespace kareus::cli {
namespace {

// Every command that takes a workload says so before it works on one that probably cannot run.
workload::Workload warned(workload::Workload w, bool training_job) {
  if (!training_job) return w;
  if (const std::string warning = workload::memory_warning(w); !warning.empty())
    std::fprintf(stderr, "%s\n", warning.c_str());
  return w;
}

// The shortest command (`kareus simulate --model llama3.2-3b`) runs: a model that does not fit on
// the default single GPU gets the smallest layout that does, said in one line.
void widen_to_fit(workload::WorkloadRequest& r) {
  workload::WorkloadRequest study = r;
  study.training_job = false;
  const workload::Workload w = workload::make_workload(study);
  if (workload::estimate_memory(w).estimate_fits()) return;
  const auto layout = workload::smallest_fitting_layout(w);
  if (!layout) return;  // make_workload says why nothing fits
  fmt::print(stderr,
             "note: {} does not fit on one {}; using the smallest layout that does, --tp {} --pp "
             "{} (give --tp and --pp to choose)\n",
             printable(w.model.name), printable(w.gpu.name), layout->tp, layout->pp);
  r.parallelism.tp = layout->tp;
  r.parallelism.pp = layout->pp;
}

workload::Workload with_gpu_file(workload::Workload w, const std::string& gpu_file) {
  if (gpu_file.empty()) return w;
  const GpuFile file = read_gpu_file(gpu_file, "--gpu-file");
  require(file.model() == w.gpu.name, "command line", "--gpu-file", gpu_file,
          fmt::format("describes {}, not the workload's GPU {}; give --gpu (or the workload's "
                      "\"gpu\") of the same model",
                      file.model(), w.gpu.name));
  w.gpu = file.spec();
  return w;
}

}  // namespace

void WorkloadFlags::add_gpu_file_to(CLI::App& app) {
  app.add_option("--gpu-file", gpu_file,
                 "GPU file to emulate instead of the catalogue's (kareus calibrate writes one): a "
                 "path, or a name in $XDG_CONFIG_HOME/kareus/gpus");
}

void WorkloadFlags::add_to(CLI::App& app) {
  app.add_option("--workload", workload_files,
                 "Workload JSON (model, gpu, parallelism); `plan` takes several, or folders")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--model", model, "Model name (kareus models) or HF config.json path");
  app.add_option("--gpu", gpu, "GPU type (kareus gpus)")->capture_default_str();
  layout_options = {
      app.add_option("--tp", tp, "Tensor parallelism")->capture_default_str(),
      app.add_option("--cp", cp, "Context parallelism")->capture_default_str(),
      app.add_option("--pp", pp, "Pipeline parallelism (stages)")->capture_default_str(),
      app.add_option("--dp", dp, "Data parallelism (pipelines)")->capture_default_str()};
  app.add_option("--mbs", mbs, "Microbatch size (sequences)")->capture_default_str();
  app.add_option("--seq", seq, "Sequence length (tokens)")->capture_default_str();
  app.add_option("--microbatches", microbatches, "Microbatches per iteration per pipeline")
      ->capture_default_str();
  app.add_option("--recompute", recompute, "Activation recomputation: full or none")
      ->capture_default_str();
}

workload::Workload WorkloadFlags::resolve() const {
  if (workload_files.size() > 1)
    throw Error::invalid("command line", "--workload",
                         fmt::format("{} files", workload_files.size()),
                         "give one; only `kareus plan` sweeps several workloads");
  if (!workload_files.empty()) {
    if (!model.empty())
      throw Error(
          "--workload and --model are exclusive: give the workload either as a file "
          "or as flags");
    if (std::filesystem::is_directory(workload_files.front()))
      throw Error::invalid("command line", "--workload", workload_files.front(),
                           "a workload JSON file; only `kareus plan` takes a folder");
    workload::WorkloadRequest r = workload::read_workload_request(workload_files.front());
    r.training_job = training_job;
    return with_gpu_file(warned(workload::make_workload(r), training_job), gpu_file);
  }
  if (model.empty()) throw Error("no workload: give --workload FILE.json or --model NAME");
  workload::WorkloadRequest r;
  r.where = "command line";
  r.training_job = training_job;
  r.model = model;
  r.gpu = gpu;
  auto& p = r.parallelism;
  p.tp = tp;
  p.cp = cp;
  p.pp = pp;
  p.dp = dp;
  p.microbatch_size = mbs;
  p.sequence_length = seq;
  p.microbatches = microbatches;
  p.recompute = workload::parse_recompute(recompute, "command line");
  const bool layout_given = std::any_of(layout_options.begin(), layout_options.end(),
                                        [](const CLI::Option* o) { return o->count() > 0; });
  if (training_job && !layout_given) widen_to_fit(r);
  return with_gpu_file(warned(workload::make_workload(r), training_job), gpu_file);
}

std::vector<NamedWorkload> WorkloadFlags::resolve_all() const {
  if (workload_files.size() <= 1 &&
      (workload_files.empty() || !std::filesystem::is_directory(workload_files.front())))
    return {{workload_files.empty() ? model
                                    : std::filesystem::path(workload_files.front()).stem().string(),
             resolve()}};
  if (!model.empty())
    throw Error(
        "--workload and --model are exclusive: give the workload either as a file "
        "or as flags");
  std::vector<std::string> files;
  for (const auto& given : workload_files) {
    if (!std::filesystem::is_directory(given)) {
      files.push_back(given);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(given))
      if (entry.is_regular_file() && entry.path().extension() == ".json")
        found.push_back(entry.path().string());
    require(!found.empty(), "command line", "--workload", given,
            "a folder with at least one workload .json file");
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  std::vector<NamedWorkload> out;
  for (const auto& file : files) {
    const std::string name = std::filesystem::path(file).stem().string();
    for (const auto& earlier : out)
      require(earlier.name != name, "command line", "--workload", file,
              "workload file names must differ (outputs are written per name)");
    out.push_back(
        {name,
         with_gpu_file(warned(workload::make_workload(workload::read_workload_request(file)), true),
                       gpu_file)});
  }
  return out;
}

}  // namespace kareus::cli
