// build_info: what this statetree binary is: its version, the git commit it was built from
// (written into a generated source at build time by workloads/build_info.cmake; "unknown"
// when the source tree is not a git checkout; "-dirty" when it had uncommitted changes),
// the kernels chosen at run time on this CPU, and the allocator policy main() set.
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

// The allocator the binary runs on and what main() asked of it (the system allocator until
// set_allocator is called; mimalloc in the release binary, docs/architecture.md).
struct Allocator {
  std::string name = "system";
  std::string version;               // "" for the system allocator
  bool keeps_freed_memory = false;   // freed memory stays mapped (no decommit)
  bool large_os_pages = false;       // 2 MiB pages asked for its segments (transparent huge pages)
};
void set_allocator(const Allocator& a);
// {"name": ..., "version": ..., "keeps_freed_memory": ..., "large_os_pages": ...}
nlohmann::json allocator_json();
// "allocator: mimalloc 2.0.9, freed memory kept mapped, 2 MiB pages" / "allocator: system"
std::string allocator_line();

}  // namespace st::build_info
