// report: see report.h.
#include "workloads/report.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <mutex>

#include "workloads/build_info.h"

namespace st::report {

namespace {
std::mutex g_noise_mu;
std::vector<std::string> g_noisy;  // "label (reason)"
}  // namespace

std::string hex(const uint8_t* data, size_t len) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(2 * len);
  for (size_t i = 0; i < len; ++i) { s += digits[data[i] >> 4]; s += digits[data[i] & 15]; }
  return s;
}

nlohmann::json summary_json(const stats::Summary& s) {
  return {{"median", s.median}, {"min", s.min},       {"max", s.max},    {"mean", s.mean},
          {"stddev", s.stddev}, {"cv", s.cv()},       {"count", s.count}, {"samples", s.samples}};
}

void note_timing(const std::string& label, const stats::Summary& s) {
  const std::string why = stats::noise_reason(s);
  if (why.empty()) return;
  std::lock_guard<std::mutex> lock(g_noise_mu);
  const std::string item = label + " (" + why + ")";
  for (const auto& x : g_noisy)
    if (x.rfind(label + " (", 0) == 0) return;  // one note per label
  g_noisy.push_back(item);
}

stats::Summary timing(const std::string& label, const std::vector<double>& samples) {
  stats::Summary s = stats::summarize(samples);
  note_timing(label, s);
  return s;
}

nlohmann::json timing_json(const std::string& label, const std::vector<double>& samples) {
  return summary_json(timing(label, samples));
}

std::string noise_warning() {
  std::lock_guard<std::mutex> lock(g_noise_mu);
  if (g_noisy.empty()) return "";
  std::string s = "warning: noisy timings, the machine was likely busy (cv > " +
                  std::to_string(int(stats::kNoisyCv * 100)) + " % or max > " +
                  std::to_string(int(stats::kNoisyMaxOverMedian)) + "x median): ";
  const size_t shown = std::min<size_t>(g_noisy.size(), 4);
  for (size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + g_noisy[i];
  if (g_noisy.size() > shown) s += " and " + std::to_string(g_noisy.size() - shown) + " more";
  s += "; rerun on an idle machine before comparing";
  return s;
}

void clear_noise() {
  std::lock_guard<std::mutex> lock(g_noise_mu);
  g_noisy.clear();
}

nlohmann::json latency_json(const stats::Latency& l) {
  return {{"p50", l.p50}, {"p90", l.p90}, {"p99", l.p99}, {"p99_9", l.p999},
          {"mean", l.mean}, {"max", l.max}, {"count", l.count}};
}

void stamp(nlohmann::json& j) {
  j["statetree"] = build_info::json();
  j["kernels"] = build_info::kernels_json();
  j["allocator"] = build_info::allocator_json();
}

std::string stamp_line() {
  return build_info::version_line() + "; " + build_info::kernels_line() + "; " + build_info::allocator_line();
}

uint64_t peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return uint64_t(ru.ru_maxrss) * 1024;
}

Progress::Progress(std::string what, uint64_t total)
    : what_(std::move(what)), total_(total ? total : 1), start_ns_(now_ns()), tty_(isatty(STDERR_FILENO) != 0) {}

namespace {
std::string duration(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", std::ceil(s));
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, int(s) % 3600 / 60);
  return buf;
}
}  // namespace

std::string Progress::line(const std::string& what, uint64_t done, uint64_t total, double elapsed_s) {
  if (total == 0) total = 1;
  if (done > total) done = total;
  const double frac = double(done) / double(total);
  const int width = 30, filled = int(frac * width);
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s [%.*s%*s] %3.0f%%  %.1fs", what.c_str(), filled,
                "##############################", width - filled, "", frac * 100.0, elapsed_s);
  std::string s = buf;
  if (done > 0 && done < total) s += ", ETA " + duration(elapsed_s * double(total - done) / double(done));
  return s;
}

void Progress::update(uint64_t done) {
  if (!tty_) return;
  const double elapsed_s = double(now_ns() - start_ns_) * 1e-9;
  if (elapsed_s < 1.0) return;
  std::fprintf(stderr, "\r%s\033[K", line(what_, done, total_, elapsed_s).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

}  // namespace st::report
