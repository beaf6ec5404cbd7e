// SPDX-License-Identifier: Apache-2.0
#include "kareus/runtime/job_check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "kareus/core/error.hpp"

namespace kareus::runtime {
namespace {

// Lower-case alphanumeric runs of a GPU name, without the vendor words that one spelling has
// and the other lacks.
std::vector<std::string> name_tokens(const std::string& name) {
  std::vector<std::string> tokens;
  std::string current;
  auto flush = [&] {
    if (!current.empty() && current != "nvidia" && current != "geforce") tokens.push_back(current);
    current.clear();
  };
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      current += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else
      flush();
  }
  flush();
  return tokens;
}

std::string first_with_digit(const std::vector<std::string>& tokens) {
  for (const std::string& t : tokens)
    if (std::any_of(t.begin(), t.end(), [](char c) { return std::isdigit(c); })) return t;
  return {};
}

std::string memory_size(const std::vector<std::string>& tokens) {
  for (const std::string& t : tokens)
    if (t.size() > 2 && t.ends_with("gb") &&
        std::all_of(t.begin(), t.end() - 2, [](char c) { return std::isdigit(c); }))
      return t;
  return {};
}

}  // namespace

bool same_gpu_model(const std::string& a, const std::string& b) {
  const auto ta = name_tokens(a), tb = name_tokens(b);
  std::string ca, cb;
  for (const auto& t : ta) ca += t;
  for (const auto& t : tb) cb += t;
  if (ca.empty() || cb.empty()) return false;
  if (ca == cb) return true;
  const std::string ma = first_with_digit(ta), mb = first_with_digit(tb);
  if (ma.empty() || mb.empty()) return false;
  const bool model =
      ma == mb || cb.find(ma) != std::string::npos || ca.find(mb) != std::string::npos;
  const std::string ga = memory_size(ta), gb = memory_size(tb);
  return model && (ga.empty() || gb.empty() || ga == gb);
}

int microbatches_of(const Schedule& schedule) {
  int forwards = 0;
  for (const ScheduleInstruction& in : schedule.stages.at(0).instructions)
    forwards += in.direction == "forward" ? 1 : 0;
  return forwards;
}

namespace {

// The schedule's workload echo: `kareus plan` writes {"model": ..., "parallelism": {...}}.
const Json* echoed(const Json& workload, const char* section, const char* field) {
  const Json* parent = &workload;
  if (section) {
    const auto it = workload.find(section);
    if (it == workload.end()) return nullptr;
    parent = &*it;
  }
  if (!parent->is_object()) return nullptr;
  const auto it = parent->find(field);
  return it == parent->end() ? nullptr : &*it;
}

std::string pointer_of(const char* section, const char* field) {
  return section ? fmt::format("workload.{}.{}", section, field)
                 : fmt::format("workload.{}", field);
}

void check_size(const Schedule& schedule, const char* field, const char* what, int job,
                std::vector<std::string>& found) {
  if (job <= 0) return;
  const Json* planned = echoed(schedule.workload, "parallelism", field);
  if (!planned || !planned->is_number_integer()) {
    found.push_back(fmt::format("the schedule records no {} size ({}), the job runs {}", what,
                                pointer_of("parallelism", field), job));
  } else if (planned->get<int>() != job) {
    found.push_back(fmt::format("the schedule was planned for {} size {}, the job runs {}", what,
                                planned->get<int>(), job));
  }
}

void check_text(const Schedule& schedule, const char* section, const char* field, const char* what,
                const std::string& job, std::vector<std::string>& found) {
  if (job.empty()) return;
  const Json* planned = echoed(schedule.workload, section, field);
  if (!planned || !planned->is_string()) {
    found.push_back(fmt::format("the schedule records no {} ({}), the job's is {}", what,
                                pointer_of(section, field), job));
  } else if (planned->get<std::string>() != job) {
    found.push_back(fmt::format("the schedule was planned for {} {}, the job's is {}", what,
                                planned->get<std::string>(), job));
  }
}

}  // namespace

std::string job_mismatches(const Schedule& schedule, const JobShape& job) {
  std::vector<std::string> found;
  check_text(schedule, nullptr, "model", "model", job.model, found);
  check_size(schedule, "tp", "tensor-parallel", job.tp, found);
  check_size(schedule, "cp", "context-parallel", job.cp, found);
  check_size(schedule, "dp", "data-parallel", job.dp, found);
  check_text(schedule, "parallelism", "recompute", "recompute mode", job.recompute, found);
  if (job.virtual_pipeline_stages > 1)
    found.push_back(fmt::format(
        "the job runs interleaved (virtual-pipeline) 1F1B with {} model chunks per pipeline "
        "rank, which no Kareus schedule plans (one chunk per stage, plain 1F1B)",
        job.virtual_pipeline_stages));
  if (!job.ranks_sharing_gpu.empty())
    found.push_back(fmt::format(
        "rank {} shares its GPU with rank(s) {} (one rank per GPU: the clocks of one rank would "
        "apply to the other's work and the job's energy would count the GPU twice)",
        job.rank, fmt::join(job.ranks_sharing_gpu, ", ")));
  const int stages = static_cast<int>(schedule.stages.size());
  if (job.pipeline_stages > 0 && job.pipeline_stages != stages)
    found.push_back(fmt::format("the schedule has {} pipeline stage(s), the job runs {}", stages,
                                job.pipeline_stages));
  const int microbatches = microbatches_of(schedule);
  if (job.microbatches > 0 && job.microbatches != microbatches)
    found.push_back(fmt::format("the schedule runs {} microbatch(es) per iteration, the job {}",
                                microbatches, job.microbatches));
  if (!job.gpu_name.empty() && !same_gpu_model(schedule.gpu, job.gpu_name))
    found.push_back(
        fmt::format("the schedule was planned for {}, this GPU is {}", schedule.gpu, job.gpu_name));
  if (found.empty()) return {};
  return fmt::format("schedule does not fit this job ({}); no clock was changed",
                     fmt::join(found, "; "));
}

void check_job(const Schedule& schedule, const JobShape& job) {
  const std::string mismatches = job_mismatches(schedule, job);
  if (!mismatches.empty()) throw Error(mismatches);
}

}  // namespace kareus::runtime
