// report: what every command uses to print results, so they all print alike:
//   - roots and hashes as 0x-prefixed lowercase hex (hex0x; hex without the prefix for
//     other byte strings);
//   - timing summaries (engine/stats/summary.h) as {median, mean, stddev, cv, min, max,
//     count, samples}; timing() / timing_json() also note noisy ones (the rule is in
//     summary.h), and main() prints one warning line on stderr after the command when any
//     was noisy;
//   - device latencies as {p50, p90, p99, p99_9, mean, max, count} (fio's percentiles);
//   - the result's provenance (stamp(): statetree version + git commit, kernels);
//   - wall-clock timing, peak memory, and a progress line with an ETA on a terminal.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/stats/summary.h"
#include "kernels/support/clock.h"

namespace st::report {

std::string hex(const uint8_t* data, size_t len);
template <class Bytes>
std::string hex(const Bytes& b) { return hex(b.data(), b.size()); }
// "0x" + lowercase hex: the one format of roots and hashes in text and JSON.
inline std::string hex0x(const uint8_t* data, size_t len) { return "0x" + hex(data, len); }
template <class Bytes>
std::string hex0x(const Bytes& b) { return hex0x(b.data(), b.size()); }

// {median, mean, stddev, cv, min, max, count, samples}.
nlohmann::json summary_json(const stats::Summary& s);
// The summary of timing samples, noted under `label` for the noise warning.
stats::Summary timing(const std::string& label, const std::vector<double>& samples);
nlohmann::json timing_json(const std::string& label, const std::vector<double>& samples);
// Notes an already computed timing summary for the noise warning.
void note_timing(const std::string& label, const stats::Summary& s);
// "" or the one warning line (without the command prefix) naming the noisy timings.
std::string noise_warning();
void clear_noise();

// {p50, p90, p99, p99_9, mean, max, count} of per-operation latencies (in their unit).
nlohmann::json latency_json(const stats::Latency& l);

// Adds "statetree": {version, commit} and "kernels": {...} to a JSON result.
void stamp(nlohmann::json& j);
// The text form of stamp(): one line.
std::string stamp_line();

// The run's clock (kernels/support/clock.h) under the name the CLI's commands spell.
inline uint64_t now_ns() { return monotonic_ns(); }

// Peak resident set size of this process so far, in bytes.
uint64_t peak_rss_bytes();

// A one-line progress indicator on stderr: bar, percent, elapsed time and the estimated
// time left (elapsed x remaining / done, once some work is done). Drawn only when stderr is
// a terminal and the work has run for more than a second. done <= total.
class Progress {
 public:
  Progress(std::string what, uint64_t total);
  ~Progress() { finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void update(uint64_t done);
  void finish();
  // The text update() draws (without the carriage return); for tests.
  static std::string line(const std::string& what, uint64_t done, uint64_t total, double elapsed_s);

 private:
  std::string what_;
  uint64_t total_;
  uint64_t start_ns_;
  bool tty_;
  bool drawn_ = false;
};

}  // namespace st::report
