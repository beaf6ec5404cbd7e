#include "workload_flags.hpp"

#include "kareus/core/error.hpp"

namespace kareus::cli {

void WorkloadFlags::add_to(CLI::App& app) {
  app.add_option("--workload", workload_file, "Workload JSON (model, gpu, parallelism)");
  app.add_option("--model", model, "Model name (kareus models) or HF config.json path");
  app.add_option("--gpu", gpu, "GPU type (kareus gpus)")->capture_default_str();
  app.add_option("--tp", tp, "Tensor parallelism")->capture_default_str();
  app.add_option("--cp", cp, "Context parallelism")->capture_default_str();
  app.add_option("--pp", pp, "Pipeline parallelism (stages)")->capture_default_str();
  app.add_option("--dp", dp, "Data parallelism (pipelines)")->capture_default_str();
  app.add_option("--mbs", mbs, "Microbatch size (sequences)")->capture_default_str();
  app.add_option("--seq", seq, "Sequence length (tokens)")->capture_default_str();
  app.add_option("--microbatches", microbatches, "Microbatches per iteration per pipeline")
      ->capture_default_str();
  app.add_option("--recompute", recompute, "Activation recomputation: full or none")
      ->capture_default_str();
}

workload::Workload WorkloadFlags::resolve() const {
  if (!workload_file.empty()) {
    if (!model.empty())
      throw Error(
          "--workload and --model are exclusive: give the workload either as a file "
          "or as flags");
    return workload::make_workload(workload::read_workload_request(workload_file));
  }
  if (model.empty()) throw Error("no workload: give --workload FILE.json or --model NAME");
  workload::WorkloadRequest r;
  r.where = "command line";
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
  return workload::make_workload(r);
}

}  // namespace kareus::cli
