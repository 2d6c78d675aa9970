// report: see report.h.
#include "workloads/report.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace st::report {

std::string hex(const uint8_t* data, size_t len) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(2 * len);
  for (size_t i = 0; i < len; ++i) { s += digits[data[i] >> 4]; s += digits[data[i] & 15]; }
  return s;
}

nlohmann::json summary_json(const stats::Summary& s) {
  return {{"median", s.median}, {"min", s.min}, {"max", s.max}, {"mean", s.mean}, {"count", s.count}};
}

uint64_t peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return uint64_t(ru.ru_maxrss) * 1024;
}

Progress::Progress(std::string what, uint64_t total)
    : what_(std::move(what)), total_(total ? total : 1), start_ns_(now_ns()), tty_(isatty(STDERR_FILENO) != 0) {}

void Progress::update(uint64_t done) {
  if (!tty_) return;
  const double elapsed_s = double(now_ns() - start_ns_) * 1e-9;
  if (elapsed_s < 1.0) return;
  const double frac = double(done) / double(total_);
  const int width = 30, filled = int(frac * width);
  std::fprintf(stderr, "\r%s [%.*s%*s] %3.0f%%  %.1fs", what_.c_str(), filled,
               "##############################", width - filled, "", frac * 100.0, elapsed_s);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

}  // namespace st::report
