// build_info: see build_info.h (version() and git_commit() are in the generated source).
#include "workloads/build_info.h"

#include "kernels/keccak256.h"
#include "kernels/sha256.h"

namespace st::build_info {

namespace {
Allocator g_allocator;  // set once by main() before any command runs
constexpr kernels::Sha256Tier kTiers[] = {kernels::Sha256Tier::portable, kernels::Sha256Tier::shani,
                                          kernels::Sha256Tier::avx2, kernels::Sha256Tier::avx512};
}

nlohmann::json json() { return {{"version", version()}, {"commit", git_commit()}}; }

nlohmann::json kernels_json() {
  nlohmann::json avail = nlohmann::json::array();
  for (auto t : kTiers)
    if (kernels::sha256_tier_available(t)) avail.push_back(kernels::sha256_tier_name(t));
  return {{"sha256", kernels::sha256_active().name}, {"sha256_available", avail},
          {"keccak256", kernels::keccak256_kernel_name()}};
}

std::string version_line() { return std::string("statetree ") + version() + " (git " + git_commit() + ")"; }

std::string kernels_line() {
  std::string avail;
  for (auto t : kTiers)
    if (kernels::sha256_tier_available(t)) {
      if (!avail.empty()) avail += ' ';
      avail += kernels::sha256_tier_name(t);
    }
  return std::string("kernels: sha256 ") + kernels::sha256_active().name + " (available: " + avail + "), keccak256 " +
         kernels::keccak256_kernel_name();
}

void set_allocator(const Allocator& a) { g_allocator = a; }

nlohmann::json allocator_json() {
  return {{"name", g_allocator.name},
          {"version", g_allocator.version},
          {"keeps_freed_memory", g_allocator.keeps_freed_memory},
          {"large_os_pages", g_allocator.large_os_pages}};
}

std::string allocator_line() {
  std::string s = "allocator: " + g_allocator.name;
  if (!g_allocator.version.empty()) s += " " + g_allocator.version;
  if (g_allocator.keeps_freed_memory) s += ", freed memory kept mapped";
  if (g_allocator.large_os_pages) s += ", 2 MiB pages";
  return s;
}

}  // namespace st::build_info
