#include "kareus/core/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace kareus {

Progress::Progress(std::string label, std::size_t total, bool enabled)
    : label_(std::move(label)),
      total_(std::max<std::size_t>(total, 1)),
      enabled_(enabled),
      tty_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
  if (!finished_) finish();
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
    const int decile = static_cast<int>(10 * done_ / total_);
    if (decile == last_decile_) return;
    last_decile_ = decile;
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
  const double fraction = static_cast<double>(done_) / static_cast<double>(total_);
  std::string line;
  if (tty_) {
    constexpr int kWidth = 28;
    const int filled = static_cast<int>(fraction * kWidth);
    line = fmt::format("\r{} [{}{}] {}/{} {:.1f}s {}", label_, std::string(filled, '#'),
                       std::string(kWidth - filled, '.'), done_, total_, elapsed, status);
    line += "\x1b[K";
    if (final_line && finished_) line += "\n";
  } else {
    line = fmt::format("{}: {}/{} ({:.0f}%) {:.1f}s {}\n", label_, done_, total_, 100 * fraction,
                       elapsed, status);
  }
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace kareus
