// build_info: what this statetree binary is: its version, the git commit it was built from
// (written into a generated source at build time by workloads/build_info.cmake; "unknown"
// when the source tree is not a git checkout; "-dirty" when it had uncommitted changes),
// and the kernels chosen at run time on this CPU.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace st::build_info {

const char* version();     // e.g. "0.1.0"
const char* git_commit();  // 12 hex digits (+ "-dirty"), or "unknown"

// {"version": ..., "commit": ...}
nlohmann::json json();
// {"sha256": active tier, "keccak256": kernel name, "sha256_available": [...]}
nlohmann::json kernels_json();
// "statetree 0.1.0 (git abc123def456)"
std::string version_line();
// "kernels: sha256 shani (available: portable shani avx2), keccak256 avx512"
std::string kernels_line();

}  // namespace st::build_info
