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

std::string job_mismatches(const Schedule& schedule, const JobShape& job) {
  std::vector<std::string> found;
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
