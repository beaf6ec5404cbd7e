// SPDX-License-Identifier: Apache-2.0
#include "refine_progress.hpp"

#include <unistd.h>

namespace kareus::cli {

RefineProgressLines::RefineProgressLines(std::FILE* out, std::chrono::milliseconds interval)
    : out_(out), tty_(isatty(fileno(out)) != 0), interval_(interval) {}

void RefineProgressLines::operator()(const std::string& prefix, const frontier::RefineProgress& p) {
  const std::string line = due_line(prefix, p);
  if (line.empty()) return;
  // On a terminal the line replaces whatever progress line was being redrawn there.
  std::fputs(((tty_ ? "\r" : "") + line + (tty_ ? "\x1b[K\n" : "\n")).c_str(), out_);
  std::fflush(out_);
}

std::string RefineProgressLines::due_line(const std::string& prefix,
                                          const frontier::RefineProgress& p) {
  const std::lock_guard lock(mutex_);
  const auto now = Clock::now();
  const auto [last, first] = last_line_.try_emplace(prefix, now);
  if (!p.sweep_done && !first && now - last->second < interval_) return "";
  last->second = now;
  return prefix + frontier::refine_progress_line(p);
}

}  // namespace kareus::cli
