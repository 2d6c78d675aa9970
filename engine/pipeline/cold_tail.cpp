// cold_tail: see cold_tail.h.
#include "engine/pipeline/cold_tail.h"

#include <map>

namespace st::pipeline {

std::vector<ColdTailRow> cold_tail_by_tx_count(std::span<const BlockResult> blocks) {
  std::map<uint32_t, ColdTailRow> rows;
  for (const BlockResult& b : blocks) {
    ColdTailRow& r = rows[b.tx_count];
    r.key = b.tx_count;
    r.count += 1;
    r.read_ns += b.prefetch.wall_ns() + b.traverse.wall_ns();
    r.misses += b.misses;
    r.slots_read += b.slots_read;
    r.device_reads += b.prefetch_page_reads + b.traverse_page_reads + b.ahead_page_reads;
  }
  std::vector<ColdTailRow> out;
  for (const auto& [k, r] : rows) out.push_back(r);
  return out;
}

std::vector<ColdTailRow> cold_tail_by_tx_index(std::span<const BlockResult> blocks) {
  std::map<uint32_t, ColdTailRow> rows;
  for (const BlockResult& b : blocks)
    for (const TxStats& t : b.txs) {
      if (t.index == 0 || t.index > b.tx_count) continue;  // pre- and post-execution
      ColdTailRow& r = rows[t.index];
      r.key = t.index;
      r.count += 1;
      r.read_ns += t.time_ns;
      r.misses += t.misses;
      r.device_reads += t.page_reads;
    }
  std::vector<ColdTailRow> out;
  for (const auto& [k, r] : rows) out.push_back(r);
  return out;
}

}  // namespace st::pipeline
