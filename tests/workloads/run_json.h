// run_json: the JSON lines of `statetree run --json` split into the block objects and the
// summary (one object per line; the summary is the line whose type is not "block").
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace st::test {

struct RunOut {
  std::vector<nlohmann::json> blocks;
  nlohmann::json summary;
};

inline RunOut parse_run(const std::string& out) {
  RunOut r;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["type"] == "block") r.blocks.push_back(j);
    else r.summary = j;
  }
  return r;
}

}  // namespace st::test
