// SPDX-License-Identifier: Apache-2.0
// kareus calibrate: fits the emulator's free constants of a GPU to measurements of it (records of
// the runtime, or a published frontier of whole plans) and writes a calibrated GPU file that
// `plan`, `simulate`, `search` and `overlap` take with --gpu-file (calibration/fit.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kareus/calibration/fit.hpp"
#include "kareus/core/error.hpp"
#include "kareus/core/output_set.hpp"
#include "kareus/core/table.hpp"
#include "kareus/hardware/gpu_file.hpp"

namespace kareus::cli {
namespace {

struct CalibrateFlags {
  std::string gpu;
  std::vector<std::string> measured;
  std::string workload;
  std::string out;
  int folds = 5;
  bool json = false;
};

std::unique_ptr<calibration::Measurements> measurements_of(const CalibrateFlags& f,
                                                           const GpuSpec& gpu) {
  std::optional<workload::Workload> w;
  if (!f.workload.empty()) w = workload::make_workload(workload::read_workload_request(f.workload));
  std::size_t csvs = 0;
  for (const auto& m : f.measured) csvs += std::filesystem::path(m).extension() == ".csv";
  if (csvs == 0)
    return std::make_unique<calibration::SpanMeasurements>(calibration::read_records(f.measured),
                                                           gpu, w);
  require(csvs == 1 && f.measured.size() == 1, "command line", "--measured", f.measured.front(),
          "give one frontier CSV, or measurement records (.jsonl) only");
  require(w.has_value(), "command line", "--workload", "(missing)",
          "a frontier CSV needs the workload its plans are of (a workload .json)");
  return std::make_unique<calibration::FrontierMeasurements>(f.measured.front(), *w);
}

std::string yes_no(const calibration::ConstantFit& c) {
  return c.identified ? "yes" : "no: " + c.reason;
}

std::string text_report(const CalibrateFlags& f, const GpuFile& base,
                        const calibration::Measurements& m, const calibration::Calibration& c,
                        const GpuFile& written) {
  std::string out = fmt::format("{} fitted to {}\n\n", base.name(), m.describe());
  TextTable t({"constant", "catalogue", "calibrated", "+-", "identified"});
  for (const auto& k : c.constants)
    t.add_row({k.key, fmt::format("{:.6g}", k.catalogue),
               k.identified ? fmt::format("{:.6g}", k.value) : "-",
               k.identified ? fmt::format("{:.2g}", k.sd) : "-", yes_no(k)});
  out += t.render();
  out += fmt::format(
      "\nfit: mean error time {:.2f} % -> {:.2f} %, energy {:.2f} % -> {:.2f} % ({} residuals; "
      "{})\n",
      100 * c.fit_error_before.time, 100 * c.fit_error_after.time, 100 * c.fit_error_before.energy,
      100 * c.fit_error_after.energy, c.residuals, c.solver);
  if (c.cv.folds > 0)
    out += fmt::format(
        "cross-validated ({} folds, whole groups held out): time {:.2f} % (catalogue {:.2f} %), "
        "energy {:.2f} % (catalogue {:.2f} %)\n",
        c.cv.folds, 100 * c.cv.calibrated.time, 100 * c.cv.catalogue.time,
        100 * c.cv.calibrated.energy, 100 * c.cv.catalogue.energy);
  for (const auto& fold : c.cv.per_fold)
    out += fmt::format(
        "  {} held out: time {:.2f} % (catalogue {:.2f} %), energy {:.2f} % "
        "(catalogue {:.2f} %)\n",
        fmt::join(fold.held_out, ", "), 100 * fold.calibrated.time, 100 * fold.catalogue.time,
        100 * fold.calibrated.energy, 100 * fold.catalogue.energy);
  std::size_t identified = 0;
  for (const auto& k : c.constants) identified += k.identified;
  out += fmt::format("wrote {} ({}): {} constant(s) calibrated, the others as in the catalogue\n",
                     f.out, written.name(), identified);
  return out;
}

Json json_report(const GpuFile& written) {
  Json out = written.document.at("calibration");
  out["name"] = written.name();
  return out;
}

void run(const CalibrateFlags& f) {
  require(f.folds >= 0, "command line", "--folds", std::to_string(f.folds), "must be >= 0");
  check_output_file(f.out, "command line", "--out");
  const GpuFile base = read_gpu_file(f.gpu, "--gpu");
  const auto m = measurements_of(f, base.spec());
  calibration::FitOptions options;
  options.folds = f.folds;
  // A frontier's fit plans the workload again between fits, minutes on a small machine.
  options.on_progress = [](const std::string& line) { std::cerr << "calibrate: " << line << "\n"; };
  const calibration::Calibration c = calibration::calibrate(base, *m, options);
  std::size_t identified = 0;
  std::string unidentified;
  for (const auto& k : c.constants) {
    identified += k.identified;
    if (!k.identified) unidentified += (unidentified.empty() ? "" : ", ") + k.key;
  }
  require(identified > 0, "command line", "--measured", f.measured.front(),
          fmt::format("the measurements identify none of the free constants ({}); nothing "
                      "written",
                      unidentified));
  const GpuFile written = c.calibrated_file(base, *m);
  const std::string text =
      f.json ? json_report(written).dump(2) + "\n" : text_report(f, base, *m, c, written);
  write_file_atomically(f.out, written.document.dump(2) + "\n");
  std::cout << text;
}

}  // namespace

void register_calibrate_command(CLI::App& app) {
  auto f = std::make_shared<CalibrateFlags>();
  auto* cmd = app.add_subcommand(
      "calibrate", "Fit the emulator's free constants of a GPU to measurements of your GPUs");
  cmd->add_option("--gpu", f->gpu, "The GPU to calibrate: a catalogue name or a GPU file")
      ->required();
  cmd->add_option("--measured", f->measured,
                  "Measurement records (.jsonl, written with --record / record=), or one "
                  "frontier CSV of whole plans (with --workload)")
      ->required()
      ->expected(1, -1);
  cmd->add_option("--workload", f->workload,
                  "Workload JSON: only records of it are fitted; required for a frontier CSV");
  cmd->add_option("--out", f->out, "The calibrated GPU file to write")->required();
  cmd->add_option("--folds", f->folds, "Cross-validation folds (0: none)")->capture_default_str();
  cmd->add_flag("--json", f->json, "Print the calibration's provenance as one JSON document");
  cmd->callback([f] { run(*f); });
}

}  // namespace kareus::cli
