// SPDX-License-Identifier: Apache-2.0
#include "kareus/core/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>

#include "kareus/core/readable.hpp"

namespace kareus {

Progress::Progress(std::string label, std::size_t total, bool enabled)
    : label_(std::move(label)),
      total_(std::max<std::size_t>(total, 1)),
      enabled_(enabled),
      tty_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
  if (finished_) return;
  if (std::uncaught_exceptions() == 0) {
    finish();
    return;
  }
  // Unwinding: an error message follows, on a clean line, not a "done" that was not.
  if (enabled_ && tty_) std::fputs("\r\x1b[K", stderr);
}

void Progress::update(std::size_t done, const std::string& status) {
  done_ = std::min(done, total_);
  if (!enabled_) return;
  if (tty_) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_draw_ < std::chrono::milliseconds(100) && done_ < total_) return;
    last_draw_ = now;
    draw(status, false);
  } else {
    // A log gets a line at each quarter, not one per step.
    const int quarter = static_cast<int>(4 * done_ / total_);
    if (quarter == last_quarter_ || done_ == total_) return;
    last_quarter_ = quarter;
    draw(status, true);
  }
}

void Progress::finish(const std::string& status) {
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  draw(status, true);
}

void Progress::draw(const std::string& status, bool final_line) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string tail = status.empty() ? "" : ", " + status;
  std::string line;
  if (final_line && finished_) {
    // Only the count reached: a search that stops before its cap is finished, not cut short.
    line = fmt::format("{}: done, {} in {}{}", label_, done_, readable_duration(elapsed), tail);
  } else {
    const double fraction = static_cast<double>(done_) / static_cast<double>(total_);
    line = fmt::format("{}: {}/{}", label_, done_, total_);
    if (elapsed > 0 && done_ > 0) {
      line += fmt::format(" ({:.3g}/s", done_ / elapsed);
      line += fmt::format(", ETA {})", readable_duration(elapsed * (1 - fraction) / fraction));
    }
    line += tail;
  }
  line = tty_ ? "\r" + line + "\x1b[K" + (final_line && finished_ ? "\n" : "") : line + "\n";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace kareus
