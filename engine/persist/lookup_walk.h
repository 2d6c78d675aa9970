// lookup_walk: the scheduling of a batched lookup, written once for every tree and both
// stores. A tree (mpt/lookup.cpp, bintrie/lookup.cpp) brings its cursors (one per key), its
// step (move one cursor on through the nodes it has), how a cursor names the node it needs
// next (arena: the page of its next record, asked for by the step through
// PageReader::request; RocksDB: a path key) and its batched hash check; the order in which
// cursors advance, reads go out and checks run is here.
//
// Streamed (arena, page_reader.h), stream_lookup(reader, walk, cursors, cold, stats):
//
//   ready = every cursor not done, cursor 0 first
//   loop: take a ready cursor; walk.wake(i)? advance it: walk.step(i) one node at a time
//         (through cached records) until it is done or waits on a page; every
//         kStreamPollEvery advances poll(block = false): submit the reads asked for so far,
//         reap what landed, wake its waiters
//         no cursor ready: if >= Walk::kCheckBatchMin checks are queued and reads are out:
//         run the checks (Walk::kSubmitBeforeChecks: poll(block = false) first, so the
//         reads asked for go out and the hashing runs while they are in flight; go on at
//         once if pages landed meanwhile)
//         nothing queued or in flight: done; else poll(block = true)
//   end: run the checks still queued
//
// Rounds (RocksDB), rounds_lookup(store, walk, cursors, stats): each round collects the
// distinct path keys of the open cursors (one per node, with the hash the node must have),
// reads them in ONE multi_get, hands every value to walk.take (strict decode, its hash check
// queued), runs the round's checks, and only then steps every open cursor through its node.
//
// Invariants:
//  - each record's hash is checked before any answer that depends on it is returned: a
//    streamed walk may steer by a record whose check is still queued (at worst to more
//    reads, never into a returned answer), and the last checks run before the walk returns
//    ok; a round's nodes are checked before any cursor uses them. Two cursors naming one
//    RocksDB node by different hashes are an error at once (both cannot match).
//  - a walk stops on the first error: no further step, read or check; the reader's
//    outstanding reads are reaped and dropped (PageReader::abandon) and the queued checks
//    dropped; the caller discards every answer of a failed lookup.
//  - bounded depth: a tree's step consumes key (MPT nibbles, binary-trie bits) at every
//    hashed node, so no cursor moves past more than Walk::kMaxNodes of them; the driver
//    counts each cursor's moves (streamed) or the rounds (RocksDB) and fails a walk that
//    goes further, so even a cycle in hostile data ends in an error, never a hang.
//  - the LookupStats it fills: rounds, page_reads, bytes_read, reads_per_round (RocksDB),
//    io_waits, io_wait_ns, reads in flight and cpu_ns (streamed, from the reader's
//    counters); keys and nodes_visited are the tree's.
//
// The streamed walk's interface (Walk):
//   static constexpr size_t kCheckBatchMin;     run the checks before a wait from this many
//   static constexpr bool kSubmitBeforeChecks;  send the queued reads before those checks
//   static constexpr uint32_t kMaxNodes;        hashed nodes a cursor may move past, at most
//   bool done(uint32_t i) const;
//   bool wake(uint32_t i);                      woken (or first taken): true when cursor i
//                                               waits on nothing more and may advance
//   io::Status step(uint32_t i, WalkStep* out); cursor i through its next node (its page
//                                               cached), or registered as a waiter on it
//   size_t checks_pending() const;
//   io::Status run_checks();                    every queued check, queue emptied; the
//                                               first mismatch as an error naming its node
//   void drop_checks();
// The rounds walk's interface (Walk):
//   static constexpr uint32_t kMaxNodes;
//   bool done(uint32_t i) const;
//   void path_key(uint32_t i, std::string* out) const;       the key of i's next node
//   const std::array<uint8_t, 32>& expect(uint32_t i) const; the hash that node must have
//   io::Status hash_conflict(const RocksRound& r, uint32_t j) const;  two hashes for key j
//   io::Status take(const RocksRound& r, uint32_t j);        decode value j, queue its check
//   io::Status run_checks(const RocksRound& r);
//   void drop_checks();
//   io::Status step(uint32_t i, const RocksRound& r, uint32_t j);     i through its node (key
//                                                            j): done, or at its next node
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/persist/page_reader.h"
#include "engine/persist/tree_db.h"
#include "io/rocksdb_store.h"
#include "io/status.h"

namespace st::persist {

// Advances between two non-blocking polls of a streamed walk.
inline constexpr size_t kStreamPollEvery = 8;

// What one step of a streamed cursor did.
enum class WalkStep : uint8_t {
  moved,  // passed a node; the cursor names its next one
  waits,  // registered as the waiter of a page that is not cached (PageReader::request)
  done,   // the cursor's answer is final (pending the checks still queued)
};

// A streamed lookup's figures from the reader's counters since `before` (the walk started
// at CPU time cpu0_ns): everything but keys and nodes_visited.
void stream_lookup_stats(const ReadCounters& before, const ReadCounters& after, uint64_t cpu0_ns, LookupStats* st);

// The error of a walk that passed more nodes than its tree can hold on one path.
io::Status walk_too_deep(uint32_t max_nodes);

namespace detail {

// Cursor i's steps until it is done or waits; *moves counts its nodes across wakes.
template <class Walk>
inline io::Status advance(Walk& w, uint32_t i, uint32_t* moves) {
  for (;;) {
    WalkStep step = WalkStep::done;
    if (io::Status s = w.step(i, &step); !s.ok()) return s;
    if (step != WalkStep::moved) return {};
    if (++*moves > Walk::kMaxNodes) return walk_too_deep(Walk::kMaxNodes);
  }
}

// The streamed loop (stream_lookup without its set-up and its last checks).
template <class Walk>
io::Status stream_loop(PageReader& reader, Walk& w, size_t cursors) {
  std::vector<uint32_t> ready;
  ready.reserve(cursors);
  for (size_t i = cursors; i-- > 0;)
    if (!w.done(uint32_t(i))) ready.push_back(uint32_t(i));
  std::vector<uint32_t> moves(cursors, 0);  // nodes each cursor moved past
  size_t since_poll = 0;
  for (;;) {
    while (!ready.empty()) {
      const uint32_t i = ready.back();
      ready.pop_back();
      if (!w.wake(i)) continue;  // still waiting for another page
      if (io::Status s = advance(w, i, &moves[i]); !s.ok()) return s;
      if (++since_poll >= kStreamPollEvery) {
        since_poll = 0;
        if (io::Status s = reader.poll(&ready, false); !s.ok()) return s;
      }
    }
    if (reader.idle()) return {};
    if (w.checks_pending() >= Walk::kCheckBatchMin && w.checks_pending() > 0) {
      // About to wait: hash the records walked meanwhile. kSubmitBeforeChecks: submit the
      // reads asked for so far first (so they are in flight while the hashing runs) and go
      // on at once with the pages that landed meanwhile.
      if constexpr (Walk::kSubmitBeforeChecks) {
        if (io::Status s = reader.poll(&ready, false); !s.ok()) return s;
        if (io::Status s = w.run_checks(); !s.ok()) return s;
        if (!ready.empty()) continue;
        if (reader.idle()) return {};
      } else {
        if (io::Status s = w.run_checks(); !s.ok()) return s;
      }
    }
    if (io::Status s = reader.poll(&ready, true); !s.ok()) return s;
  }
}

}  // namespace detail

// A batched lookup over the arena's page reader (see the top of this file). cold: drop the
// reader's page cache first. The walk's cursors and checks are set up by the caller.
template <class Walk>
io::Status stream_lookup(PageReader& reader, Walk& w, size_t cursors, bool cold, LookupStats* st) {
  const uint64_t cpu0 = thread_cpu_ns();
  if (cold) reader.clear();
  reader.reset_in_flight_max();
  const ReadCounters before = reader.counters();
  io::Status s = detail::stream_loop(reader, w, cursors);
  if (s.ok()) s = w.run_checks();
  if (!s.ok()) {
    reader.abandon();
    w.drop_checks();
  }
  stream_lookup_stats(before, reader.counters(), cpu0, st);
  return s;
}

// One RocksDB round: the distinct path keys of the open cursors and what the store
// returned for them.
struct RocksRound {
  std::vector<std::string> keys;                  // distinct, in the order cursors named them
  std::vector<std::array<uint8_t, 32>> expect;    // per key: the hash its node must have
  std::vector<std::string> values;                // per key (found[j] != 0)
  std::vector<uint8_t> found;
  std::vector<uint32_t> key_of;                   // per open cursor: its key's index
  std::span<const uint8_t> value(uint32_t j) const {
    return {reinterpret_cast<const uint8_t*>(values[j].data()), values[j].size()};
  }
  // Scratch, kept across rounds.
  std::unordered_map<std::string, uint32_t> index;
  std::vector<std::string_view> views;
  std::string key;
};

namespace detail {

// The round's distinct keys; false in *more when every cursor is done.
template <class Walk>
io::Status round_keys(const Walk& w, size_t cursors, RocksRound& r, bool* more) {
  r.keys.clear();
  r.expect.clear();
  r.index.clear();
  for (size_t i = 0; i < cursors; ++i) {
    if (w.done(uint32_t(i))) continue;
    w.path_key(uint32_t(i), &r.key);
    auto [it, fresh] = r.index.try_emplace(r.key, uint32_t(r.keys.size()));
    if (fresh) {
      r.keys.push_back(r.key);
      r.expect.push_back(w.expect(uint32_t(i)));
    } else if (r.expect[it->second] != w.expect(uint32_t(i))) {
      return w.hash_conflict(r, it->second);
    }
    r.key_of[i] = it->second;
  }
  *more = !r.keys.empty();
  return {};
}

// One MultiGet of the round's keys, counted in the stats.
io::Status read_round(io::RocksKvStore& store, RocksRound& r, LookupStats* st);

template <class Walk>
io::Status rounds_loop(io::RocksKvStore& store, Walk& w, size_t cursors, LookupStats* st) {
  RocksRound r;
  r.key_of.resize(cursors);
  for (uint32_t round = 0;; ++round) {
    bool more = false;
    if (io::Status s = round_keys(w, cursors, r, &more); !s.ok() || !more) return s;
    if (round > Walk::kMaxNodes) return walk_too_deep(Walk::kMaxNodes);  // a cursor moved past more
    if (io::Status s = read_round(store, r, st); !s.ok()) return s;
    for (uint32_t j = 0; j < r.keys.size(); ++j)
      if (io::Status s = w.take(r, j); !s.ok()) return s;
    if (io::Status s = w.run_checks(r); !s.ok()) return s;
    for (size_t i = 0; i < cursors; ++i) {
      if (w.done(uint32_t(i))) continue;
      if (io::Status s = w.step(uint32_t(i), r, r.key_of[i]); !s.ok()) return s;
    }
  }
}

}  // namespace detail

// A batched lookup over RocksDB, level by level (see the top of this file).
template <class Walk>
io::Status rounds_lookup(io::RocksKvStore& store, Walk& w, size_t cursors, LookupStats* st) {
  w.drop_checks();
  io::Status s = detail::rounds_loop(store, w, cursors, st);
  if (!s.ok()) w.drop_checks();
  return s;
}

}  // namespace st::persist
