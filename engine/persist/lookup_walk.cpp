// lookup_walk.cpp: the non-template parts of the lookup walk driver (lookup_walk.h): a
// streamed lookup's figures from the reader's counters, a RocksDB round's MultiGet, and the
// error of a walk deeper than its tree allows.
#include "engine/persist/lookup_walk.h"

namespace st::persist {

void stream_lookup_stats(const ReadCounters& before, const ReadCounters& after, uint64_t cpu0_ns, LookupStats* st) {
  st->rounds = after.rounds - before.rounds;
  st->io_wait_ns = after.read_wall_ns - before.read_wall_ns;
  st->page_reads = after.page_reads - before.page_reads;
  st->bytes_read = after.bytes_read - before.bytes_read;
  st->io_waits = after.stream_waits - before.stream_waits;
  st->reads_in_flight_sum = after.stream_in_flight_sum - before.stream_in_flight_sum;
  st->reads_in_flight_max = after.stream_in_flight_max;
  st->reads_per_round.clear();
  st->cpu_ns = thread_cpu_ns() - cpu0_ns;
}

io::Status walk_too_deep(uint32_t max_nodes) {
  return {io::Errc::corrupt_page,
          "lookup: a key's walk passed more than " + std::to_string(max_nodes) + " nodes (a cycle in the stored tree)"};
}

namespace detail {

io::Status read_round(io::RocksKvStore& store, RocksRound& r, LookupStats* st) {
  r.views.assign(r.keys.begin(), r.keys.end());
  if (io::Status s = store.multi_get(r.views, &r.values, &r.found); !s.ok()) return s;
  st->rounds++;
  st->page_reads += r.keys.size();
  st->reads_per_round.push_back(uint32_t(r.keys.size()));
  for (size_t j = 0; j < r.keys.size(); ++j)
    if (r.found[j]) st->bytes_read += r.values[j].size();
  return {};
}

}  // namespace detail
}  // namespace st::persist
