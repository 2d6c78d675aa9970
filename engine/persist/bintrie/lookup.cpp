// bintrie/lookup.cpp: BintrieTreeDb::lookup, batched level-by-level lookups.
//
// Lookup (arena, streamed: page_reader.h): every key holds a cursor (its next record's
// locator and the bit depth of that node). Each cursor walks through records whose pages
// are cached (a group: check the blob in place, pick the entry covering the key's next g
// bits, take the child of that index; a stem: compare stems, read the slot in place), so a
// record that shares a page with its parent costs no I/O; at a page that is not cached it
// waits, and goes on as soon as that page lands while the other reads are in flight.
// RocksDB: level by level, each round one MultiGet of the blob keys blob_key(key, depth)
// of all cursors. Every blob a lookup uses is checked against the hash its parent's entry
// records for it (the root: the manifest's root hash), as verify() checks it: arena, the
// checks of the blobs decoded so far run batched (bintrie/blob_checks.h) whenever the walks
// wait for a read, and at the end; RocksDB, each round's blobs before any cursor uses them.
// A mismatch fails the lookup naming the record or path key; no answer of a failed lookup
// is returned. A record reached twice with different hashes is an error at once; a stem
// must continue its path. A slot key's answer also carries its account (the MPT's does): each
// distinct address of the batch's slot keys adds one account cursor (basic-data key) to the
// same walk unless the batch already asks for that account (DbOptions::slot_key_accounts:
// off, a slot key reads its slot alone).
#include <cstring>
#include <map>

#include "engine/persist/bintrie/tree_db.h"

namespace st::persist::bintrie_read {
namespace {

// An account's answer from its header stem's basic-data and code-hash leaves: it exists iff
// the basic-data leaf is present.
void fill_account(const std::optional<Hash32>& basic, const std::optional<Hash32>& code, AccountInfo* out) {
  if (!basic) return;
  out->exists = true;
  const bintrie::BasicData bdata = bintrie::parse_basic_data(*basic);
  out->nonce = bdata.nonce;
  out->balance = bdata.balance_be;
  out->code_size = bdata.code_size;
  if (code) out->code_hash = *code;
}

// The name of the node at RocksDB blob key `key`, for errors.
std::string rocks_key_name(const std::string& key) {
  return "binary trie node at path key " + bd::hex({reinterpret_cast<const uint8_t*>(key.data()), key.size()});
}

}  // namespace

template <class Name>
io::Status BintrieTreeDb::run_checks(const Name& name) {
  const long bad = checks_.run();
  if (bad < 0) return {};
  const size_t i = size_t(bad);
  bool root = false;
  const std::string where = name(checks_.tag(i), &root);
  return {io::Errc::corrupt_page, where + (root ? ": root hash does not match the manifest"
                                              : checks_.is_group(i) ? ": group hash does not match its parent's entry"
                                                                    : ": stem hash does not match its parent's entry")};
}

void BintrieTreeDb::finish_stem(Cursor& c, const bintrie::StemBlob* stem, LookupAnswer* ans) {
  c.done = true;
  const bool match = stem && std::memcmp(stem->stem.data(), c.key.data(), 31) == 0;
  if (!match) return;
  if (c.account)
    fill_account(bd::stem_value(*stem, bintrie::kBasicDataLeafKey), bd::stem_value(*stem, bintrie::kCodeHashLeafKey),
                 &ans->account);
  else
    ans->slot_value = bd::stem_value(*stem, c.key[31]);
}

const char* BintrieTreeDb::step(Cursor& c, const Node& n, LookupAnswer* ans) {
  if (!n.is_group) {
    if (!bd::same_prefix(n.stem.stem.data(), c.key.data(), c.depth)) return "stem does not continue its path";
    finish_stem(c, &n.stem, ans);
    return nullptr;
  }
  if (c.stem_only) return "a group where its parent's entry ends in a stem";
  if (c.depth >= kMaxDepth) return "a group at depth 248 or deeper";
  const uint32_t pos = bd::key_bits(c.key.data(), c.depth, g_);
  const auto e = bd::find_entry(n.group, pos);
  if (!e) {
    finish_stem(c, nullptr, ans);
    return nullptr;
  }
  const unsigned r = n.group.entries[*e].depth;
  c.stem_only = r < g_;
  c.depth += r;
  c.expect = n.group.entries[*e].hash;
  if (!n.children.empty()) c.loc = n.children[*e];
  return nullptr;
}

io::Status BintrieTreeDb::lookup(std::span<const state::StateKey> keys, std::vector<LookupAnswer>* out, LookupStats* stats,
                                 bool cold_pages) {
  // A slot key's answer carries its account's fields (as the MPT's does): the account's
  // basic-data and code-hash leaves sit on the account's header stem, so every address of
  // a slot key gets an account cursor in the same batch (the batch's own account key of that
  // address when there is one, else an extra cursor after the caller's keys; a slot of the
  // header stem walks the same records, decoded once per batch).
  std::vector<Cursor> cur(keys.size());
  std::map<state::Address, uint32_t> account_cursor;  // address -> its account cursor
  for (size_t i = 0; i < keys.size(); ++i)
    if (!keys[i].slot) account_cursor.emplace(keys[i].address, uint32_t(i));
  std::vector<uint32_t> account_of(keys.size(), UINT32_MAX);  // slot key -> its account cursor
  for (size_t i = 0; i < keys.size() && slot_key_accounts_; ++i) {
    if (!keys[i].slot) continue;
    auto [it, fresh] = account_cursor.emplace(keys[i].address, uint32_t(cur.size()));
    if (fresh) {
      Cursor a;
      a.account = true;
      a.key = bintrie::basic_data_key(ks_, keys[i].address);
      cur.push_back(a);
    }
    account_of[i] = it->second;
  }
  for (size_t i = 0; i < cur.size(); ++i) {
    Cursor& c = cur[i];
    if (i < keys.size()) {
      c.account = !keys[i].slot.has_value();
      c.key = c.account ? bintrie::basic_data_key(ks_, keys[i].address)
                        : bintrie::storage_slot_key(ks_, keys[i].address, *keys[i].slot);
    }
    c.loc = root_loc();
    c.expect = files_.manifest.root_hash;
    c.done = empty_tree();
  }
  out->assign(cur.size(), LookupAnswer{});
  LookupStats local;
  LookupStats* s = stats ? stats : &local;
  *s = {};
  s->keys = keys.size();
  io::Status st = files_.store == StoreKind::arena ? lookup_arena(cur, *out, s, cold_pages) : lookup_rocks(cur, *out, s);
  if (!st) {
    out->clear();  // nothing of a failed lookup is an answer
    return st;
  }
  for (size_t i = 0; i < keys.size(); ++i)
    if (account_of[i] != UINT32_MAX) (*out)[i].account = (*out)[account_of[i]].account;
  out->resize(keys.size());
  return st;
}

io::Status BintrieTreeDb::read_lite(Locator l, uint32_t i, LookupState& ls, LiteNode* out, bool* complete) {
  *complete = false;
  RecordView rec;
  if (io::Status st = reader_->record(l, &rec); !st) return st;
  auto bad = [&](const std::string& what) {
    return io::Status(io::Errc::corrupt_page, "binary trie " + bd::locator_name(l) + ": " + what);
  };
  out->kind = rec.kind;
  switch (rec.kind) {
    case bd::kStem: {
      if (std::string e = bintrie::check_stem_blob(rec.body, &out->stem); !e.empty()) return bad(e);
      if (rec.child_count != 0) return bad("stem record with " + std::to_string(rec.child_count) + " children");
      out->is_group = false;
      *complete = true;
      return {};
    }
    case bd::kGroup: {
      if (std::string e = bintrie::check_group_blob(rec.body, g_, &out->group); !e.empty()) return bad(e);
      out->is_group = true;
      out->rec = rec;
      const size_t k = out->group.k;
      if (rec.child_count != k)
        return bad("group of " + std::to_string(k) + " entries has " + std::to_string(rec.child_count) + " children");
      *complete = true;
      return {};
    }
    case bd::kStemChunked: {
      if (rec.child_count == 0 || !rec.body.empty()) return bad("chunked stem without pieces");
      Cursor& c = (*ls.cur)[i];
      for (uint32_t p = 0; p < rec.child_count; ++p) {
        const uint64_t page = locator_page(rec.child(p));
        if (!reader_->loaded(page) && !reader_->request(page, i)) ++c.waits;
      }
      if (c.waits) return {};
      std::vector<uint8_t>& blob = ls.chunked.emplace_back();
      for (uint32_t p = 0; p < rec.child_count; ++p) {
        RecordView piece;
        if (io::Status st = reader_->record(rec.child(p), &piece); !st) return st;
        if (piece.kind != bd::kPiece || piece.child_count != 0)
          return bad("piece " + std::to_string(p) + " (" + bd::locator_name(rec.child(p)) + ") is not a stem piece");
        blob.insert(blob.end(), piece.body.begin(), piece.body.end());
      }
      if (std::string e = bintrie::check_stem_blob(blob, &out->stem); !e.empty()) return bad(e);
      out->is_group = false;
      *complete = true;
      return {};
    }
    default:
      return bad("unexpected record kind " + std::to_string(rec.kind));
  }
}

void BintrieTreeDb::finish_stem_view(Cursor& c, const bintrie::StemBlobView* stem, LookupAnswer* ans) {
  c.done = true;
  const bool match = stem && std::memcmp(stem->stem, c.key.data(), 31) == 0;
  if (!match) return;
  auto value = [&](uint8_t sub) -> std::optional<Hash32> {
    const uint8_t* v = stem->value(sub);
    if (!v) return std::nullopt;
    Hash32 out;
    std::memcpy(out.data(), v, 32);
    return out;
  };
  if (c.account) {
    fill_account(value(bintrie::kBasicDataLeafKey), value(bintrie::kCodeHashLeafKey), &ans->account);
  } else {
    ans->slot_value = value(c.key[31]);
  }
}

// The node at cursor i's locator, from the batch's memo or read (its page cached) and
// queued for its hash check; *ni: its index in ls.nodes, or kNoNode while it still waits
// for stem pieces.
inline io::Status BintrieTreeDb::lite_node_at(uint32_t i, LookupState& ls, uint32_t* ni) {
  const Cursor& c = (*ls.cur)[i];
  const Locator at = c.loc;
  if (auto it = ls.memo.find(at); it != ls.memo.end()) {
    *ni = it->second;
    return {};
  }
  LiteNode n;
  bool complete = false;
  *ni = kNoNode;
  if (io::Status st = read_lite(at, i, ls, &n, &complete); !st) return st;
  if (!complete) return {};  // waits for stem pieces
  // Used only once its hash matched (the checks run in batches, and all before the
  // lookup returns): until then it can at worst steer this walk astray (bounded by
  // depth 248), never into an answer.
  n.expect = c.expect;
  if (n.is_group) checks_.add_group(n.group, c.expect.data(), at);
  else checks_.add_stem(n.stem, c.expect.data(), at);
  *ni = uint32_t(ls.nodes.size());
  ls.nodes.push_back(n);
  ls.memo.emplace(at, *ni);
  return {};
}

io::Status BintrieTreeDb::advance(uint32_t i, LookupState& ls) {
  Cursor& c = (*ls.cur)[i];
  while (!c.done) {
    const uint64_t page = locator_page(c.loc);
    if (!reader_->loaded(page) && !reader_->request(page, i)) {
      c.waits = 1;
      return {};
    }
    const Locator at = c.loc;
    uint32_t ni;
    if (io::Status st = lite_node_at(i, ls, &ni); !st || ni == kNoNode) return st;
    const LiteNode& n = ls.nodes[ni];
    if (n.expect != c.expect)  // one record, two parents' entries: at most one matches it
      return record_error(at, std::string(n.is_group ? "group" : "stem") +
                                  " hash does not match its parent's entry (two entries name it by different hashes)");
    ++ls.visits;
    if (!n.is_group) {
      if (!bd::same_prefix(n.stem.stem, c.key.data(), c.depth))
        return record_error(at, "stem " + bd::hex({n.stem.stem, 31}) + " does not continue its path");
      finish_stem_view(c, &n.stem, &(*ls.ans)[i]);
      return {};
    }
    if (c.stem_only) return record_error(at, "a group where its parent's entry ends in a stem");
    if (c.depth >= kMaxDepth) return record_error(at, "a group at depth 248 or deeper");
    const uint32_t pos = bd::key_bits(c.key.data(), c.depth, g_);
    uint32_t e;
    unsigned r;
    if (!n.group.find(pos, &e, &r)) {
      finish_stem_view(c, nullptr, &(*ls.ans)[i]);
      return {};
    }
    c.stem_only = r < g_;
    c.depth += r;
    c.loc = n.rec.child(e);
    std::memcpy(c.expect.data(), n.group.hash(e), 32);
  }
  return {};
}

// An arena lookup's figures: the reads since `before`, the nodes visited, its CPU time.
void BintrieTreeDb::arena_lookup_stats(const ReadCounters& before, uint64_t visits, uint64_t cpu0, LookupStats* s) {
  const ReadCounters& after = reader_->counters();
  s->rounds = after.rounds - before.rounds;
  s->io_wait_ns = after.read_wall_ns - before.read_wall_ns;
  s->page_reads = after.page_reads - before.page_reads;
  s->bytes_read = after.bytes_read - before.bytes_read;
  s->io_waits = after.stream_waits - before.stream_waits;
  s->reads_in_flight_sum = after.stream_in_flight_sum - before.stream_in_flight_sum;
  s->reads_in_flight_max = after.stream_in_flight_max;
  s->nodes_visited = visits;
  s->reads_per_round.clear();
  s->cpu_ns = thread_cpu_ns() - cpu0;
}

// Streamed (page_reader.h): every cursor advances as soon as the pages it waits for are
// cached; the reads the walks ask for go out every kPollEvery advances (a non-blocking
// poll, which also refills the device queue), so the queue stays full across levels and
// the decoding overlaps the reads. Decoded nodes are kept per batch by locator (the top
// groups are on every key's path). Each node's hash check is queued when it is decoded and
// run, all queued together (BlobHashChecks), whenever the walks are about to wait for a
// read (after submitting it), and at the end: no answer is returned before every blob on
// its path matched its parent's entry; on a mismatch the lookup fails (its answers are
// dropped by lookup()).
io::Status BintrieTreeDb::lookup_arena(std::vector<Cursor>& cur, std::vector<LookupAnswer>& ans, LookupStats* s,
                                       bool cold) {
  constexpr size_t kPollEvery = 8;
  const uint64_t cpu0 = thread_cpu_ns();
  if (cold) reader_->clear();
  checks_.clear();
  auto name = [&](uint64_t tag, bool* root) {
    *root = tag == root_loc();
    return "binary trie " + bd::locator_name(Locator(tag));
  };
  reader_->reset_in_flight_max();
  const ReadCounters before = reader_->counters();
  LookupState ls;
  ls.cur = &cur;
  ls.ans = &ans;
  ls.memo.reserve(2 * cur.size());  // ~ the nodes on the batch's paths: no rehash mid-walk
  ls.nodes.reserve(2 * cur.size());
  std::vector<uint32_t> ready;
  ready.reserve(cur.size());
  for (size_t i = cur.size(); i-- > 0;)
    if (!cur[i].done) ready.push_back(uint32_t(i));
  io::Status st;
  size_t since_poll = 0;
  while (st.ok()) {
    while (!ready.empty() && st.ok()) {
      const uint32_t i = ready.back();
      ready.pop_back();
      Cursor& c = cur[i];
      if (c.waits > 0 && --c.waits > 0) continue;  // still waiting for another page
      st = advance(i, ls);
      if (st.ok() && ++since_poll >= kPollEvery) {
        since_poll = 0;
        st = reader_->poll(&ready, false);
      }
    }
    if (!st.ok()) break;
    if (checks_.pending() > 0 && !reader_->idle()) {
      // About to wait: submit the reads asked for so far, then hash the blobs walked
      // meanwhile while those reads are in flight (a lone key's walk: each group hashed
      // during the read of the next page, only its last blob after the last read).
      st = reader_->poll(&ready, false);
      if (st.ok()) st = run_checks(name);
      if (!st.ok()) break;
      if (!ready.empty()) continue;
    }
    if (reader_->idle()) break;
    st = reader_->poll(&ready, true);
  }
  if (st.ok()) st = run_checks(name);
  if (!st.ok()) {
    reader_->abandon();
    checks_.clear();
  }
  arena_lookup_stats(before, ls.visits, cpu0, s);
  return st;
}

// The round's distinct blob keys (one per path the open cursors stand at) with the hash
// each node must have; slot_of maps each cursor to its key. Two cursors at one path with
// different hashes are an error (both cannot match).
io::Status BintrieTreeDb::rocks_round_keys(const std::vector<Cursor>& cur, RocksRound& r) {
  r.index.clear();
  r.keys.clear();
  r.expect.clear();
  for (size_t i = 0; i < cur.size(); ++i) {
    if (cur[i].done) continue;
    const std::vector<uint8_t> k = bintrie::blob_key(cur[i].key.data(), cur[i].depth);
    std::string ks(reinterpret_cast<const char*>(k.data()), k.size());
    auto [it, fresh] = r.index.emplace(std::move(ks), uint32_t(r.keys.size()));
    if (fresh) {
      r.keys.push_back(it->first);
      r.expect.push_back(cur[i].expect);
    } else if (r.expect[it->second] != cur[i].expect) {  // one path, two hashes: both cannot match
      return {io::Errc::corrupt_page, rocks_key_name(r.keys[it->second]) + ": hash does not match its parent's entry"};
    }
    r.slot_of[i] = it->second;
  }
  return {};
}

// Decodes the round's blob j strictly and queues its hash check (tag j).
io::Status BintrieTreeDb::rocks_decode(RocksRound& r, size_t j) {
  auto where = [&] { return rocks_key_name(r.keys[j]); };
  if (!r.found[j]) return {io::Errc::corrupt_page, where() + ": missing"};
  const std::span<const uint8_t> blob{reinterpret_cast<const uint8_t*>(r.values[j].data()), r.values[j].size()};
  if (!blob.empty() && blob[0] != bintrie::kGroupBlobVersion && blob[0] != bintrie::kStemBlobVersion)
    return {io::Errc::corrupt_page, where() + ": unknown blob version byte " + std::to_string(blob[0])};
  if (io::Status st = decode_blob(blob, g_, where, &r.decoded[j]); !st) return st;
  // The views for the hash check (the strict checks decode_blob ran, without copies).
  if (r.decoded[j].is_group) {
    bintrie::GroupBlobView v;
    if (std::string e = bintrie::check_group_blob(blob, g_, &v); !e.empty()) return {io::Errc::corrupt_page, where() + ": " + e};
    checks_.add_group(v, r.expect[j].data(), j);
  } else {
    bintrie::StemBlobView v;
    if (std::string e = bintrie::check_stem_blob(blob, &v); !e.empty()) return {io::Errc::corrupt_page, where() + ": " + e};
    checks_.add_stem(v, r.expect[j].data(), j);
  }
  return {};
}

// One MultiGet of the round's keys (counted in the stats), each blob decoded, and every
// node of the round hashed (one batch) before any cursor uses it.
io::Status BintrieTreeDb::rocks_read_round(RocksRound& r, LookupStats* s) {
  r.views.assign(r.keys.begin(), r.keys.end());
  if (io::Status st = files_.rocks->multi_get(r.views, &r.values, &r.found); !st) return st;
  s->rounds++;
  s->page_reads += r.keys.size();
  s->reads_per_round.push_back(uint32_t(r.keys.size()));
  for (size_t j = 0; j < r.keys.size(); ++j)
    if (r.found[j]) s->bytes_read += r.values[j].size();
  r.decoded.resize(r.keys.size());
  for (size_t j = 0; j < r.keys.size(); ++j)
    if (io::Status st = rocks_decode(r, j); !st) return st;
  if (io::Status st = run_checks([&](uint64_t j, bool* root) {
        *root = r.keys[j].size() == 1;  // blob_key of depth 0: the root
        return rocks_key_name(r.keys[size_t(j)]);
      });
      !st) {
    checks_.clear();
    return st;
  }
  return {};
}

io::Status BintrieTreeDb::lookup_rocks(std::vector<Cursor>& cur, std::vector<LookupAnswer>& ans, LookupStats* s) {
  RocksRound r;
  r.slot_of.resize(cur.size());
  checks_.clear();
  for (;;) {
    if (io::Status st = rocks_round_keys(cur, r); !st) return st;
    if (r.keys.empty()) break;
    if (io::Status st = rocks_read_round(r, s); !st) return st;
    for (size_t i = 0; i < cur.size(); ++i) {
      Cursor& c = cur[i];
      if (c.done) continue;
      const uint32_t j = r.slot_of[i];
      s->nodes_visited++;
      if (const char* e = step(c, r.decoded[j], &ans[i]))
        return {io::Errc::corrupt_page, rocks_key_name(r.keys[j]) + ": " + e};
    }
  }
  return {};
}

}  // namespace st::persist::bintrie_read
