// cold_cache: putting files back into the "never read" state before a cold measurement,
// and warming up the I/O path (machine.md: the first 20-30 reads after the CPU was idle
// take 100-1000 us each). Two protocols, and the caller reports which one ran:
//   drop_caches : sync(); echo 3 > /proc/sys/vm/drop_caches   (needs root)
//   fadvise     : per file fdatasync + posix_fadvise(POSIX_FADV_DONTNEED)
// Neither can evict the hypervisor host's cache: data this VM touched recently may still be
// served from host RAM (machine.md), which benchmarks must state.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "io/node_store.h"
#include "io/status.h"

namespace st::io {

enum class ColdProtocol : uint8_t { drop_caches, fadvise_dontneed };
const char* cold_protocol_name(ColdProtocol p);

struct ColdResult {
  ColdProtocol protocol = ColdProtocol::fadvise_dontneed;
  std::string detail;  // why drop_caches was not used, or "" when it was
};

// Evicts `files` from the page cache. drop_caches when permitted (and allow_drop_caches),
// otherwise fadvise on each file. An error only if a file cannot be opened or advised.
Status make_cold(std::span<const std::string> files, bool allow_drop_caches, ColdResult* result);

struct WarmUpResult {
  uint32_t reads = 0;
  double first_read_us = 0, last_read_us = 0;
};

// Issues `reads` single-page reads (one at a time, QD1) of pages chosen by a seeded LCG in
// [0, capacity), ignoring their content (never-written pages are fine): it wakes the I/O
// path before timing. Requires an idle store.
WarmUpResult warm_up(NodeStore& store, uint32_t reads, uint64_t seed);

}  // namespace st::io
