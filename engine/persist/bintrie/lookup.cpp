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
// off, a slot key reads its slot alone). Records and blobs are taken through the verified
// fetch (bintrie/verified_fetch.h: the record checks, decode_keyed, the mismatch's words).
// Each blob is parsed once: the arena's walk works on in-place views only (read_lite: the
// strict check's view, group_blob.h, steers the cursors and feeds the queued hash check; no
// GroupBlob is built, nothing copied); a RocksDB blob is decoded once by decode_keyed, its
// check queued from that node (a group's Node::group_view, a stem's decoded blob).
#include <cstring>
#include <map>

#include "engine/bintrie/account_leaves.h"
#include "engine/persist/bintrie/tree_db.h"
#include "engine/persist/lookup_walk.h"

namespace st::persist::bintrie_read {
namespace {

// An account's answer from its header stem's basic-data and code-hash leaves, read as
// bintrie::account_exists reads them (a destroyed account is absent).
void fill_account(const std::optional<Hash32>& basic, const std::optional<Hash32>& code, AccountInfo* out) {
  if (!bintrie::account_exists(basic, code)) return;
  out->exists = true;
  const bintrie::BasicData bdata = bintrie::parse_basic_data(basic.value_or(Hash32{}));
  out->nonce = bdata.nonce;
  out->balance = bdata.balance_be;
  out->code_size = bdata.code_size;
  if (code) out->code_hash = *code;
}

// The name of the node at RocksDB blob key `key`, for errors.
std::string rocks_key_name(const std::string& key) { return key_name(kReader, key); }

}  // namespace

template <class Name>
io::Status BintrieTreeDb::run_checks(const Name& name) {
  const long bad = checks_.run();
  if (bad < 0) return {};
  const size_t i = size_t(bad);
  bool root = false;
  const std::string where = name(checks_.tag(i), &root);
  return {io::Errc::corrupt_page, where + ": " + hash_mismatch_what(root, checks_.is_group(i))};
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
  io::Status st = files_.store == StoreKind::arena ? walk_arena(cur, *out, s, cold_pages) : walk_rocks(cur, *out, s);
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
  auto bad = [&](const std::string& what) { return record_error(kReader, l, what); };
  out->kind = rec.kind;
  switch (rec.kind) {
    case bd::kStem: {
      if (std::string e = bintrie::check_stem_blob(rec.body, &out->stem); !e.empty()) return bad(e);
      if (std::string e = stem_record_error(rec); !e.empty()) return bad(e);
      out->is_group = false;
      *complete = true;
      return {};
    }
    case bd::kGroup: {
      if (std::string e = bintrie::check_group_blob(rec.body, g_, &out->group); !e.empty()) return bad(e);
      out->is_group = true;
      out->rec = rec;
      if (std::string e = group_record_error(rec, out->group.k); !e.empty()) return bad(e);
      *complete = true;
      return {};
    }
    case bd::kStemChunked: {
      if (std::string e = chunked_record_error(rec); !e.empty()) return bad(e);
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
        if (std::string e = piece_record_error(piece, p, rec.child(p)); !e.empty()) return bad(e);
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

// Moves cursor i through its next node when the node's page (and a chunked stem's pieces)
// are cached; else registers it as the waiter of what is missing.
io::Status BintrieTreeDb::step_arena(uint32_t i, LookupState& ls, WalkStep* out) {
  Cursor& c = (*ls.cur)[i];
  *out = WalkStep::done;
  if (c.done) return {};
  const uint64_t page = locator_page(c.loc);
  if (!reader_->loaded(page) && !reader_->request(page, i)) {
    c.waits = 1;
    *out = WalkStep::waits;
    return {};
  }
  const Locator at = c.loc;
  uint32_t ni;
  if (io::Status st = lite_node_at(i, ls, &ni); !st) return st;
  if (ni == kNoNode) {  // waits for stem pieces
    *out = WalkStep::waits;
    return {};
  }
  const LiteNode& n = ls.nodes[ni];
  if (n.expect != c.expect)  // one record, two parents' entries: at most one matches it
    return record_error(kReader, at,
                        std::string(n.is_group ? "group" : "stem") +
                            " hash does not match its parent's entry (two entries name it by different hashes)");
  ++ls.visits;
  if (!n.is_group) {
    if (!bd::same_prefix(n.stem.stem, c.key.data(), c.depth))
      return record_error(kReader, at, "stem " + bd::hex({n.stem.stem, 31}) + " does not continue its path");
    finish_stem_view(c, &n.stem, &(*ls.ans)[i]);
    return {};
  }
  if (c.stem_only) return record_error(kReader, at, "a group where its parent's entry ends in a stem");
  if (c.depth >= kMaxDepth) return record_error(kReader, at, "a group at depth 248 or deeper");
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
  *out = WalkStep::moved;
  return {};
}

// The binary trie's side of the streamed walk (lookup_walk.h): cursor i moves through
// cached records one at a time (step_arena; a chunked stem may wait on several piece pages at once, counted
// in its waits); every blob decoded meanwhile is hashed before each wait for a read.
struct BintrieTreeDb::ArenaWalk {
  static constexpr size_t kCheckBatchMin = 1;
  static constexpr bool kSubmitBeforeChecks = true;  // a lone key hashes a group while its next page is read
  static constexpr uint32_t kMaxNodes = kMaxDepth + 1;  // groups consume >= 1 bit each, then the stem
  BintrieTreeDb& db;
  LookupState& ls;
  bool done(uint32_t i) const { return (*ls.cur)[i].done; }
  bool wake(uint32_t i) {
    Cursor& c = (*ls.cur)[i];
    return !(c.waits > 0 && --c.waits > 0);
  }
  io::Status step(uint32_t i, WalkStep* out) { return db.step_arena(i, ls, out); }
  size_t checks_pending() const { return db.checks_.pending(); }
  io::Status run_checks() {
    return db.run_checks([&](uint64_t tag, bool* root) {
      *root = tag == db.root_loc();
      return record_name(kReader, Locator(tag));
    });
  }
  void drop_checks() { db.checks_.clear(); }
};

// Streamed (lookup_walk.h). Decoded nodes are kept per batch by locator (the top groups
// are on every key's path). Each node's hash check is queued when it is decoded
// (BlobHashChecks) and run, all queued together, whenever the walks are about to wait for
// a read (after submitting it), and at the end.
io::Status BintrieTreeDb::walk_arena(std::vector<Cursor>& cur, std::vector<LookupAnswer>& ans, LookupStats* s,
                                     bool cold) {
  LookupState ls;
  ls.cur = &cur;
  ls.ans = &ans;
  ls.memo.reserve(2 * cur.size());  // ~ the nodes on the batch's paths: no rehash mid-walk
  ls.nodes.reserve(2 * cur.size());
  ArenaWalk w{*this, ls};
  checks_.clear();
  io::Status st = stream_lookup(*reader_, w, cur.size(), cold, s);
  s->nodes_visited = ls.visits;
  return st;
}

// The binary trie's side of the RocksDB rounds (lookup_walk.h): each distinct blob of a
// round decoded strictly and its hash queued (take, tag = its key index); the cursors at it
// step through the decoded node once the round's checks passed.
struct BintrieTreeDb::RocksWalk {
  static constexpr uint32_t kMaxNodes = ArenaWalk::kMaxNodes;
  BintrieTreeDb& db;
  std::vector<Cursor>& cur;
  std::vector<LookupAnswer>& ans;
  LookupStats* st;
  std::vector<Node> decoded;  // the round's nodes, by key index
  bool done(uint32_t i) const { return cur[i].done; }
  void path_key(uint32_t i, std::string* out) const {
    const std::vector<uint8_t> k = bintrie::blob_key(cur[i].key.data(), cur[i].depth);
    out->assign(reinterpret_cast<const char*>(k.data()), k.size());
  }
  const Hash32& expect(uint32_t i) const { return cur[i].expect; }
  io::Status hash_conflict(const RocksRound& r, uint32_t j) const {  // one path, two hashes
    return {io::Errc::corrupt_page, rocks_key_name(r.keys[j]) + ": hash does not match its parent's entry"};
  }
  io::Status take(const RocksRound& r, uint32_t j);
  io::Status run_checks(const RocksRound& r) {
    return db.run_checks([&](uint64_t j, bool* root) {
      *root = r.keys[j].size() == 1;  // blob_key of depth 0: the root
      return rocks_key_name(r.keys[size_t(j)]);
    });
  }
  void drop_checks() { db.checks_.clear(); }
  io::Status step(uint32_t i, const RocksRound& r, uint32_t j) {
    st->nodes_visited++;
    if (const char* e = db.step(cur[i], decoded[j], &ans[i]))
      return {io::Errc::corrupt_page, rocks_key_name(r.keys[j]) + ": " + e};
    return {};
  }
};

// Decodes the round's blob j strictly (once) and queues its hash check (tag j).
io::Status BintrieTreeDb::RocksWalk::take(const RocksRound& r, uint32_t j) {
  auto where = [&] { return rocks_key_name(r.keys[j]); };
  if (!r.found[j]) return {io::Errc::corrupt_page, where() + ": missing"};
  // Sized at the round's first take: the nodes (and the stem views into them) stay put
  // until the round's checks ran.
  if (decoded.size() < r.keys.size()) decoded.resize(r.keys.size());
  Node& n = decoded[j];
  if (io::Status s = decode_keyed(r.value(j), db.g_, where(), &n); !s) return s;
  // The check reads what decode_keyed made, the bytes not parsed again: a group through the
  // view its strict check kept (into the round's value), a stem through its decoded blob.
  if (n.is_group) db.checks_.add_group(n.group_view, r.expect[j].data(), j);
  else db.checks_.add_stem(bintrie::stem_blob_view(n.stem), r.expect[j].data(), j);
  return {};
}

io::Status BintrieTreeDb::walk_rocks(std::vector<Cursor>& cur, std::vector<LookupAnswer>& ans, LookupStats* s) {
  RocksWalk w{*this, cur, ans, s, {}};
  return rounds_lookup(*files_.rocks, w, cur.size(), s);
}

}  // namespace st::persist::bintrie_read
