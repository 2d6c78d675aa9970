// result_samples: reads what statetree commands wrote with --json (one object, or JSON lines
// with one object per line, as bench.sh collects them) and pulls the samples of one metric
// out of it, for `statetree compare`.
//
// A metric is a dot path into each object ("total_ns_per_leaf", "stages.hash.ms"; an array
// element by its index, "qd.2.us_per_read"). What the path names gives samples:
//   a number                          -> that one value
//   an array of numbers               -> every value
//   an object with "samples": [...]   -> those values (a summary statetree printed)
//   an object with "median" only      -> the median (one value)
// Samples of every object of the file are concatenated in file order.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace st::workloads {

// The JSON objects of a result file, or a one-line error (file, line).
std::variant<std::vector<nlohmann::json>, std::string> load_result_objects(const std::string& path);

// The samples of `metric` over `objects`; an empty vector when no object has it.
std::variant<std::vector<double>, std::string> metric_samples(const std::vector<nlohmann::json>& objects,
                                                              const std::string& metric);

// Dot paths of every summary with raw samples ("samples" arrays) in the objects, in first-seen
// order: the metrics a comparison can use without naming one.
std::vector<std::string> sampled_metrics(const std::vector<nlohmann::json>& objects);

}  // namespace st::workloads
