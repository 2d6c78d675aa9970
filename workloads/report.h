// report: helpers every command uses to print results: hex strings, {median,min,max}
// JSON objects, wall-clock timing, peak memory, and a progress line on a terminal.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/stats/summary.h"

namespace st::report {

std::string hex(const uint8_t* data, size_t len);
template <class Bytes>
std::string hex(const Bytes& b) { return hex(b.data(), b.size()); }

nlohmann::json summary_json(const stats::Summary& s);

inline uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch()).count());
}

// Peak resident set size of this process so far, in bytes.
uint64_t peak_rss_bytes();

// A one-line progress indicator on stderr, drawn only when stderr is a terminal and the
// work has run for more than a second. done <= total.
class Progress {
 public:
  Progress(std::string what, uint64_t total);
  void update(uint64_t done);
  void finish();

 private:
  std::string what_;
  uint64_t total_;
  uint64_t start_ns_;
  bool tty_;
  bool drawn_ = false;
};

}  // namespace st::report
