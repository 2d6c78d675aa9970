// bintrie_read: the binary trie database opened for reading (bintrie_db.h): batched
// level-by-level lookups, verify, proofs, over the arena (record pages) or RocksDB (blobs
// keyed by path). Layout: bintrie_disk.h.
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
// checks of the blobs decoded so far run batched (bintrie_blob_checks.h) whenever the walks
// wait for a read, and at the end; RocksDB, each round's blobs before any cursor uses them.
// A mismatch fails the lookup naming the record or path key; no answer of a failed lookup
// is returned. A record reached twice with different hashes is an error at once; a stem
// must continue its path. A slot key's answer also carries its account (the MPT's does): each
// distinct address of the batch's slot keys adds one account cursor (basic-data key) to the
// same walk unless the batch already asks for that account (DbOptions::slot_key_accounts:
// off, a slot key reads its slot alone).
//
// Verify: depth-first over the nodes, in chunks of up to kVerifyChunk taken from a stack
// (one load / MultiGet per chunk); in the arena a node's children whose pages are already
// cached are checked at once, before the next chunk (a page holds a group and part of its
// subtree: it is read once, although the cache is dropped whenever it holds more than
// DbOptions::verify_cache_pages). Each node carries the hash its parent committed to: a
// stem's hash is recomputed from its values, a group's from its entries
// (reconstruct_group), and compared; a stem's bits must continue the path of its position.
//
// Invariants: every decode is strict (group_blob.h); a record's kind and child count must
// match its blob; a lookup answers only from blobs whose hashes matched their parents'
// entries up to the manifest's root; proofs check each node on their path the same way;
// walks stop at depth 248, so hostile data cannot loop.
#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <unordered_map>

#include "engine/bintrie/keys.h"
#include "engine/bintrie/proof.h"
#include "engine/bintrie/stem_bits.h"
#include "engine/persist/bintrie/blob_checks.h"
#include "engine/persist/bintrie/db.h"
#include "engine/persist/bintrie/disk.h"
#include "engine/persist/snapshot/reader.h"

namespace st::persist {
namespace {

using bintrie::Bytes32;
namespace bd = bintrie_disk;

constexpr size_t kVerifyChunk = 4096;
constexpr unsigned kMaxDepth = bintrie::kStemBits;  // no internal node at depth >= 248

// A decoded node: a group (with its children's locators in the arena) or a stem.
struct Node {
  bool is_group = false;
  bintrie::GroupBlob group;
  bintrie::StemBlob stem;
  std::vector<Locator> children;
};

// want: 0 = either (by the version byte: RocksDB), 1 = a stem blob, 2 = a group blob.
// Errors name the node through where() (built only on failure).
template <class Where>
io::Status decode_blob(std::span<const uint8_t> blob, unsigned g, const Where& where, Node* out, int want = 0) {
  if (blob.empty()) return {io::Errc::corrupt_page, where() + ": empty blob"};
  if (want == 2 || (want == 0 && blob[0] == bintrie::kGroupBlobVersion)) {
    auto r = bintrie::decode_group_blob(blob, g);
    if (auto* e = std::get_if<std::string>(&r)) return {io::Errc::corrupt_page, where() + ": " + *e};
    out->is_group = true;
    out->group = std::move(std::get<bintrie::GroupBlob>(r));
    return {};
  }
  auto r = bintrie::decode_stem_blob(blob);
  if (auto* e = std::get_if<std::string>(&r)) return {io::Errc::corrupt_page, where() + ": " + *e};
  out->is_group = false;
  out->stem = std::move(std::get<bintrie::StemBlob>(r));
  return {};
}

// The hash of the node at relative depth r (1..g), relative path q, of a group whose inner
// hashes are `inner` (reconstruct_group).
// An account's answer from its header stem's basic-data and code-hash leaves: it exists iff
// the basic-data leaf is present.
void fill_account(const std::optional<Bytes32>& basic, const std::optional<Bytes32>& code, AccountInfo* out) {
  if (!basic) return;
  out->exists = true;
  const bintrie::BasicData bdata = bintrie::parse_basic_data(*basic);
  out->nonce = bdata.nonce;
  out->balance = bdata.balance_be;
  out->code_size = bdata.code_size;
  if (code) out->code_hash = *code;
}

Bytes32 group_node_hash(const bintrie::GroupBlob& b, const std::vector<Bytes32>& inner, unsigned r, uint32_t q) {
  if (r < b.g) return inner[(size_t(1) << r) - 1 + q];
  for (const auto& e : b.entries)
    if (e.depth == b.g && e.pos == q) return e.hash;
  return Bytes32{};
}

class BintrieDb final : public TreeDb {
 public:
  BintrieDb(DbFiles&& f, const bintrie::Hasher& h, unsigned g, size_t verify_cache_pages, bool slot_key_accounts)
      : files_(std::move(f)), h_(h), ks_{h, bintrie::TreeIndexEndian::big}, g_(g),
        verify_cache_pages_(verify_cache_pages), slot_key_accounts_(slot_key_accounts), checks_(h, g) {
    if (files_.store == StoreKind::arena) reader_ = std::make_unique<PageReader>(files_.arena->pages());
  }

  const io::Manifest& manifest() const override { return files_.manifest; }
  const std::string& source_spec() const override { return files_.commit.spec; }
  std::vector<std::string> data_files() const override { return files_.data_files(); }
  io::NodeStore* page_store() override { return files_.store == StoreKind::arena ? &files_.arena->pages() : nullptr; }
  PageReader* page_reader() override { return reader_.get(); }
  void record_read_latency(stats::LogHistogram* sink) override {
    if (reader_) reader_->set_latency_sink(sink);
  }
  io::Status open_snapshot(std::unique_ptr<SnapshotReader>* out) override { return open_snapshot_of(files_, out); }
  io::Status open_snapshot_table(std::unique_ptr<SnapshotTable>* out) override { return open_snapshot_table_of(files_, out); }

  io::Status lookup(std::span<const state::StateKey> keys, std::vector<LookupAnswer>* out, LookupStats* stats,
                    bool cold_pages) override;
  io::Status verify(VerifyReport* report, const ProgressFn& progress) override;
  io::Status prove(const state::StateKey& key, StateProof* out) override;

 private:
  struct Cursor {
    Bytes32 key{};
    bool account = false;
    bool done = false;
    bool stem_only = false;  // the parent's entry ends before the group's bottom: a stem
    unsigned depth = 0;      // bit depth of the next node
    Locator loc = kNoLocator;
    Bytes32 expect{};        // the hash the next node must have (its parent's entry; the root: the manifest's)
    uint32_t waits = 0;         // arena: page requests not yet landed
  };

  // A node as a streamed lookup needs it: strictly checked views into cached pages (valid
  // for the batch: the cache is dropped only between batches), nothing copied.
  struct LiteNode {
    bool is_group = false;
    uint8_t kind = 0;
    bintrie::GroupBlobView group;
    bintrie::StemBlobView stem;
    RecordView rec;               // the group's record: its children
    Bytes32 expect{};             // the hash it was first reached with (its check is queued)
  };
  struct LookupState {
    std::vector<Cursor>* cur = nullptr;
    std::vector<LookupAnswer>* ans = nullptr;
    std::unordered_map<Locator, uint32_t> memo;  // decoded nodes by locator
    std::vector<LiteNode> nodes;
    std::deque<std::vector<uint8_t>> chunked;    // chunked stems, reassembled
    uint64_t visits = 0;
  };
  // The node at l (its page cached) into *out; *complete = false when parts of it (stem
  // pieces) are still being read: cursor i then waits on them (its waits counted).
  io::Status read_lite(Locator l, uint32_t i, LookupState& ls, LiteNode* out, bool* complete);
  // Walks cursor i through cached pages until it is done or waits for a page.
  io::Status advance(uint32_t i, LookupState& ls);
  io::Status lite_node_at(uint32_t i, LookupState& ls, uint32_t* ni);
  static constexpr uint32_t kNoNode = ~0u;
  void finish_stem_view(Cursor& c, const bintrie::StemBlobView* stem, LookupAnswer* ans);

  bool empty_tree() const { return files_.manifest.root_hash == Bytes32{}; }
  Locator root_loc() const { return files_.commit.root; }

  // Arena: the node at l (its page loaded). *complete = false: load `need` first (and
  // call again). *records counts the records read.
  io::Status read_node(Locator l, Node* out, bool* complete, std::vector<Locator>* need, uint64_t* records);
  io::Status read_group_children(Locator l, const RecordView& rec, Node* out);
  io::Status read_chunked_stem(Locator l, const RecordView& rec, Node* out, bool* complete, std::vector<Locator>* need,
                               uint64_t* records);
  // Arena: read_node, loading whatever it needs (verify, prove).
  io::Status read_node_sync(Locator l, Node* out, uint64_t* records);
  // RocksDB: the node at (path, depth); found = false when absent.
  io::Status rocks_get(const uint8_t* path, unsigned depth, Node* out, bool* found);

  // A cursor at a decoded node: moves on (group) or finishes (stem) and fills the answer.
  // Returns nullptr, or what is wrong with the node (the caller names it).
  const char* step(Cursor& c, const Node& n, LookupAnswer* ans);
  void finish_stem(Cursor& c, const bintrie::StemBlob* stem, LookupAnswer* ans);

  io::Status lookup_arena(std::vector<Cursor>& cur, std::vector<LookupAnswer>& ans, LookupStats* stats, bool cold);
  void arena_lookup_stats(const ReadCounters& before, uint64_t visits, uint64_t cpu0, LookupStats* s);
  io::Status lookup_rocks(std::vector<Cursor>& cur, std::vector<LookupAnswer>& ans, LookupStats* stats);
  // lookup_rocks's round: the distinct blob keys of the open cursors, their blobs and nodes.
  struct RocksRound {
    std::unordered_map<std::string, uint32_t> index;
    std::vector<std::string> keys;
    std::vector<std::string_view> views;
    std::vector<uint32_t> slot_of;  // per cursor: its key's index
    std::vector<std::string> values;
    std::vector<uint8_t> found;
    std::vector<Node> decoded;      // one per distinct key of the round
    std::vector<Bytes32> expect;    // per distinct key: the hash its node must have
  };
  io::Status rocks_round_keys(const std::vector<Cursor>& cur, RocksRound& r);
  io::Status rocks_decode(RocksRound& r, size_t j);
  io::Status rocks_read_round(RocksRound& r, LookupStats* s);
  io::Status prove_key(const Bytes32& key, bintrie::KeyProof* out);
  // prove_key's position: the node (arena: its locator), its bit depth, whether its
  // parent's entry ends in a stem, the hash it must have.
  struct ProvePos {
    Locator loc;
    unsigned depth;
    bool stem_only;
    Bytes32 expect;
  };
  io::Status read_prove_node(const Bytes32& key, const ProvePos& at, Node* node, std::string* where, uint64_t* records);
  io::Status prove_at_stem(const bintrie::StemBlob& stem, const Bytes32& key, const ProvePos& at,
                           const std::string& where, bintrie::KeyProof* p);
  io::Status prove_in_group(const bintrie::GroupBlob& group, const std::vector<Locator>& children, const Bytes32& key,
                            ProvePos& at, const std::string& where, bintrie::KeyProof* p, bool* done);

  // verify(): a node still to check, with the hash its parent committed to.
  struct VerifyItem {
    Locator loc;
    Bytes32 expect;
    Bytes32 path;        // the first `depth` bits are the node's position
    uint8_t depth;
    uint8_t stem_only;
  };
  // verify()'s walk: todo, the nodes still to check, a stack (depth-first, so it stays
  // small); each round takes up to kVerifyChunk from its top (chunk) and loads their pages
  // in one submission. cached: arena children whose page is already cached, checked at once
  // (their page may hold a whole subtree), so a page is read about once even though the
  // cache is dropped. The rest: buffers reused across chunks, and the counts so far.
  struct VerifyWalk {
    VerifyReport rep;
    bool arena = false;
    std::vector<VerifyItem> todo, chunk, cached;
    uint64_t records = 0, done_nodes = 0, rocks_bytes = 0;
    uint64_t account_leaves = 0;  // leaves the accounts found hold: not storage slots
    Node node;
    std::vector<Locator> locs;
    std::vector<std::string> keys;
    std::vector<std::string_view> views;
    std::vector<std::string> values;
    std::vector<uint8_t> found;
  };
  io::Status verify_stem(VerifyWalk& w, const VerifyItem& it, const std::string& where);
  io::Status verify_group(VerifyWalk& w, const VerifyItem& it, const std::string& where);
  io::Status verify_node(VerifyWalk& w, const VerifyItem& it, const std::string& where);
  io::Status verify_chunk_arena(VerifyWalk& w);
  io::Status verify_chunk_rocks(VerifyWalk& w);
  io::Status finish_verify(VerifyWalk& w, const ReadCounters& before);

  DbFiles files_;
  bintrie::Hasher h_;
  bintrie::KeyScheme ks_;
  unsigned g_;
  size_t verify_cache_pages_;  // DbOptions::verify_cache_pages
  bool slot_key_accounts_;     // DbOptions::slot_key_accounts
  std::unique_ptr<PageReader> reader_;
  BlobHashChecks checks_;      // lookups: the blobs used, hashed in batches before any answer
  // Runs the queued checks; a mismatch is an error naming the node (name(tag)).
  template <class Name>
  io::Status run_checks(const Name& name);
};

template <class Name>
io::Status BintrieDb::run_checks(const Name& name) {
  const long bad = checks_.run();
  if (bad < 0) return {};
  const size_t i = size_t(bad);
  bool root = false;
  const std::string where = name(checks_.tag(i), &root);
  return {io::Errc::corrupt_page, where + (root ? ": root hash does not match the manifest"
                                              : checks_.is_group(i) ? ": group hash does not match its parent's entry"
                                                                    : ": stem hash does not match its parent's entry")};
}

// What is wrong with the record at l, as an error naming it.
io::Status record_error(Locator l, const std::string& what) {
  return {io::Errc::corrupt_page, "binary trie " + bd::locator_name(l) + ": " + what};
}

// A group record's children into out->children: one per blob entry.
io::Status BintrieDb::read_group_children(Locator l, const RecordView& rec, Node* out) {
  const size_t k = out->group.entries.size();
  out->children.clear();
  if (rec.child_count != k)
    return record_error(l, "group of " + std::to_string(k) + " entries has " + std::to_string(rec.child_count) + " children");
  for (uint32_t i = 0; i < k; ++i) out->children.push_back(rec.child(i));
  return {};
}

// A chunked stem: once every piece's page is cached (else they go to *need), the pieces
// reassembled and decoded as one stem blob.
io::Status BintrieDb::read_chunked_stem(Locator l, const RecordView& rec, Node* out, bool* complete,
                                        std::vector<Locator>* need, uint64_t* records) {
  if (rec.child_count == 0 || !rec.body.empty()) return record_error(l, "chunked stem without pieces");
  bool all = true;
  for (uint32_t i = 0; i < rec.child_count; ++i)
    if (!reader_->loaded(locator_page(rec.child(i)))) { need->push_back(rec.child(i)); all = false; }
  if (!all) return {};
  std::vector<uint8_t> blob;
  for (uint32_t i = 0; i < rec.child_count; ++i) {
    RecordView piece;
    if (io::Status st = reader_->record(rec.child(i), &piece); !st) return st;
    ++*records;
    if (piece.kind != bd::kPiece || piece.child_count != 0)
      return record_error(l, "piece " + std::to_string(i) + " (" + bd::locator_name(rec.child(i)) + ") is not a stem piece");
    blob.insert(blob.end(), piece.body.begin(), piece.body.end());
  }
  if (io::Status st = decode_blob(blob, g_, [&] { return "binary trie " + bd::locator_name(l); }, out, 1); !st) return st;
  if (out->is_group) return record_error(l, "chunked stem holds a group blob");
  *complete = true;
  return {};
}

io::Status BintrieDb::read_node(Locator l, Node* out, bool* complete, std::vector<Locator>* need, uint64_t* records) {
  *complete = false;
  RecordView rec;
  if (io::Status st = reader_->record(l, &rec); !st) return st;
  ++*records;
  auto where = [&] { return "binary trie " + bd::locator_name(l); };
  switch (rec.kind) {
    case bd::kStem:
    case bd::kGroup: {
      if (io::Status st = decode_blob(rec.body, g_, where, out, rec.kind == bd::kStem ? 1 : 2); !st) return st;
      if (rec.kind == bd::kStem) {
        if (out->is_group) return record_error(l, "stem record holds a group blob");
        if (rec.child_count != 0) return record_error(l, "stem record with " + std::to_string(rec.child_count) + " children");
        *complete = true;
        return {};
      }
      if (!out->is_group) return record_error(l, "group record holds a stem blob");
      if (io::Status st = read_group_children(l, rec, out); !st) return st;
      *complete = true;
      return {};
    }
    case bd::kStemChunked:
      return read_chunked_stem(l, rec, out, complete, need, records);
    default:
      return record_error(l, "unexpected record kind " + std::to_string(rec.kind));
  }
}

io::Status BintrieDb::read_node_sync(Locator l, Node* out, uint64_t* records) {
  std::vector<Locator> need{l};
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (io::Status st = reader_->load(need); !st) return st;
    need.clear();
    bool complete = false;
    uint64_t n = 0;
    if (io::Status st = read_node(l, out, &complete, &need, &n); !st) return st;
    if (complete) { *records += n; return {}; }
  }
  return {io::Errc::corrupt_page, "binary trie " + bd::locator_name(l) + ": record parts did not load"};
}

io::Status BintrieDb::rocks_get(const uint8_t* path, unsigned depth, Node* out, bool* found) {
  const std::vector<uint8_t> k = bintrie::blob_key(path, depth);
  std::string_view key(reinterpret_cast<const char*>(k.data()), k.size());
  std::vector<std::string> values;
  std::vector<uint8_t> f;
  if (io::Status st = files_.rocks->multi_get({&key, 1}, &values, &f); !st) return st;
  *found = f[0] != 0;
  if (!*found) return {};
  return decode_blob({reinterpret_cast<const uint8_t*>(values[0].data()), values[0].size()}, g_,
                     [&] { return "binary trie node at path key " + bd::hex(k); }, out);
}

void BintrieDb::finish_stem(Cursor& c, const bintrie::StemBlob* stem, LookupAnswer* ans) {
  c.done = true;
  const bool match = stem && std::memcmp(stem->stem.data(), c.key.data(), 31) == 0;
  if (!match) return;
  if (c.account)
    fill_account(bd::stem_value(*stem, bintrie::kBasicDataLeafKey), bd::stem_value(*stem, bintrie::kCodeHashLeafKey),
                 &ans->account);
  else
    ans->slot_value = bd::stem_value(*stem, c.key[31]);
}

const char* BintrieDb::step(Cursor& c, const Node& n, LookupAnswer* ans) {
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

io::Status BintrieDb::lookup(std::span<const state::StateKey> keys, std::vector<LookupAnswer>* out, LookupStats* stats,
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

io::Status BintrieDb::read_lite(Locator l, uint32_t i, LookupState& ls, LiteNode* out, bool* complete) {
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

void BintrieDb::finish_stem_view(Cursor& c, const bintrie::StemBlobView* stem, LookupAnswer* ans) {
  c.done = true;
  const bool match = stem && std::memcmp(stem->stem, c.key.data(), 31) == 0;
  if (!match) return;
  auto value = [&](uint8_t sub) -> std::optional<Bytes32> {
    const uint8_t* v = stem->value(sub);
    if (!v) return std::nullopt;
    Bytes32 out;
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
inline io::Status BintrieDb::lite_node_at(uint32_t i, LookupState& ls, uint32_t* ni) {
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

io::Status BintrieDb::advance(uint32_t i, LookupState& ls) {
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
void BintrieDb::arena_lookup_stats(const ReadCounters& before, uint64_t visits, uint64_t cpu0, LookupStats* s) {
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
io::Status BintrieDb::lookup_arena(std::vector<Cursor>& cur, std::vector<LookupAnswer>& ans, LookupStats* s,
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

// The name of the node at RocksDB blob key `key`, for errors.
std::string rocks_key_name(const std::string& key) {
  return "binary trie node at path key " + bd::hex({reinterpret_cast<const uint8_t*>(key.data()), key.size()});
}

// The round's distinct blob keys (one per path the open cursors stand at) with the hash
// each node must have; slot_of maps each cursor to its key. Two cursors at one path with
// different hashes are an error (both cannot match).
io::Status BintrieDb::rocks_round_keys(const std::vector<Cursor>& cur, RocksRound& r) {
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
io::Status BintrieDb::rocks_decode(RocksRound& r, size_t j) {
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
io::Status BintrieDb::rocks_read_round(RocksRound& r, LookupStats* s) {
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

io::Status BintrieDb::lookup_rocks(std::vector<Cursor>& cur, std::vector<LookupAnswer>& ans, LookupStats* s) {
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

// Checks one stem against its item: its path, its hash; counts its leaves and (an account's
// header stem) its account fields; hands its leaves to the leaf sink.
io::Status BintrieDb::verify_stem(VerifyWalk& w, const VerifyItem& it, const std::string& where) {
  if (!bd::same_prefix(w.node.stem.stem.data(), it.path.data(), it.depth))
    return {io::Errc::corrupt_page, where + ": stem " + bd::hex(w.node.stem.stem) + " does not continue its path"};
  if (bintrie::stem_blob_hash(h_, w.node.stem) != it.expect)
    return {io::Errc::corrupt_page, where + ": stem hash does not match its parent's entry"};
  w.rep.leaves += bd::stem_value_count(w.node.stem);
  if (leaf_sink_) {
    uint8_t key[32];
    std::memcpy(key, w.node.stem.stem.data(), 31);
    for (unsigned i = 0, j = 0; i < 256; ++i) {
      if (!((w.node.stem.bitmap[i / 8] >> (7 - i % 8)) & 1)) continue;
      key[31] = uint8_t(i);
      leaf_sink_({key, 32}, w.node.stem.values[j++]);
    }
  }
  if (const auto chunks = bd::account_code_chunks(w.node.stem)) {
    ++w.rep.accounts;
    w.account_leaves += 2 + *chunks;  // basic data, code hash, every code chunk
  }
  return {};
}

// Checks one group against its item (its hash from its entries) and queues its children:
// in the arena those whose page is cached go to w.cached, the others to w.todo.
io::Status BintrieDb::verify_group(VerifyWalk& w, const VerifyItem& it, const std::string& where) {
  if (it.stem_only) return {io::Errc::corrupt_page, where + ": a group where its parent's entry ends in a stem"};
  if (it.depth >= kMaxDepth) return {io::Errc::corrupt_page, where + ": group at depth " + std::to_string(it.depth)};
  const std::vector<Bytes32> inner = bintrie::reconstruct_group(h_, w.node.group);
  if (inner[0] != it.expect)
    return {io::Errc::corrupt_page, where + (it.depth == 0 ? ": root hash does not match the manifest"
                                                          : ": group hash does not match its parent's entry")};
  // Pushed in reverse, so the stacks pop the entries in order.
  for (size_t e = w.node.group.entries.size(); e-- > 0;) {
    const auto& ent = w.node.group.entries[e];
    if (it.depth + ent.depth > kMaxDepth)
      return {io::Errc::corrupt_page, where + ": entry below depth " + std::to_string(kMaxDepth)};
    VerifyItem ch;
    ch.loc = w.arena ? w.node.children[e] : kNoLocator;
    ch.expect = ent.hash;
    ch.path = it.path;
    ch.depth = uint8_t(it.depth + ent.depth);
    ch.stem_only = ent.depth < g_;
    for (unsigned b = 0; b < ent.depth; ++b) {
      const unsigned d = it.depth + b;
      const uint8_t mask = uint8_t(0x80 >> (d % 8));
      if ((ent.pos >> (g_ - 1 - b)) & 1) ch.path[d / 8] |= mask;
      else ch.path[d / 8] &= uint8_t(~mask);
    }
    (w.arena && reader_->loaded(locator_page(ch.loc)) ? w.cached : w.todo).push_back(ch);
  }
  return {};
}

// Checks one node (decoded into w.node) against its item; queues its children.
io::Status BintrieDb::verify_node(VerifyWalk& w, const VerifyItem& it, const std::string& where) {
  ++w.done_nodes;
  return w.node.is_group ? verify_group(w, it, where) : verify_stem(w, it, where);
}

// Arena: loads the chunk's pages in one submission, then checks each item and, at once,
// its descendants whose pages are cached by then. The cache is dropped whenever it holds
// more than verify_cache_pages.
io::Status BintrieDb::verify_chunk_arena(VerifyWalk& w) {
  if (reader_->cached_pages() > verify_cache_pages_) reader_->clear();
  w.locs.clear();
  for (const VerifyItem& it : w.chunk) w.locs.push_back(it.loc);
  if (io::Status st = reader_->load(w.locs); !st) return st;
  for (const VerifyItem& first : w.chunk) {
    w.cached.push_back(first);
    while (!w.cached.empty()) {
      const VerifyItem it = w.cached.back();
      w.cached.pop_back();
      if (io::Status st = read_node_sync(it.loc, &w.node, &w.records); !st) return st;
      if (io::Status st = verify_node(w, it, "binary trie " + bd::locator_name(it.loc)); !st) return st;
    }
  }
  return {};
}

// RocksDB: one MultiGet of the chunk's blob keys, then each blob decoded and checked.
io::Status BintrieDb::verify_chunk_rocks(VerifyWalk& w) {
  w.keys.clear();
  for (const VerifyItem& it : w.chunk) {
    const std::vector<uint8_t> k = bintrie::blob_key(it.path.data(), it.depth);
    w.keys.emplace_back(reinterpret_cast<const char*>(k.data()), k.size());
  }
  w.views.assign(w.keys.begin(), w.keys.end());
  if (io::Status st = files_.rocks->multi_get(w.views, &w.values, &w.found); !st) return st;
  for (size_t i = 0; i < w.chunk.size(); ++i) {
    const std::string where = "binary trie node at path key " +
                              bd::hex({reinterpret_cast<const uint8_t*>(w.keys[i].data()), w.keys[i].size()});
    if (!w.found[i]) {
      if (w.chunk[i].depth == 0 && empty_tree()) continue;
      return {io::Errc::corrupt_page, where + ": missing"};
    }
    w.rocks_bytes += w.values[i].size();
    ++w.records;
    if (io::Status st = decode_blob({reinterpret_cast<const uint8_t*>(w.values[i].data()), w.values[i].size()}, g_,
                                    [&] { return where; }, &w.node);
        !st)
      return st;
    if (io::Status st = verify_node(w, w.chunk[i], where); !st) return st;
  }
  return {};
}

// The report's totals once every node is checked: pages and bytes read, the slots (the
// leaves less the accounts' own), which cannot be fewer than none.
io::Status BintrieDb::finish_verify(VerifyWalk& w, const ReadCounters& before) {
  // A lone stem at the root: its hash is the root (checked as the root item's expect).
  if (w.arena) {
    const ReadCounters& after = reader_->counters();
    w.rep.pages = after.page_reads - before.page_reads;
    w.rep.bytes = after.bytes_read - before.bytes_read;
    reader_->clear();
  } else {
    w.rep.bytes = w.rocks_bytes;
  }
  if (w.account_leaves > w.rep.leaves)
    return {io::Errc::corrupt_page, "binary trie: the account headers' fields and code chunks (" +
                                        std::to_string(w.account_leaves) + ") outnumber the tree's leaves (" +
                                        std::to_string(w.rep.leaves) + ")"};
  w.rep.slots = w.rep.leaves - w.account_leaves;
  w.rep.nodes = w.records;
  w.rep.root = files_.manifest.root_hash;
  w.rep.ok = true;
  return {};
}

io::Status BintrieDb::verify(VerifyReport* report, const ProgressFn& progress) {
  VerifyWalk w;
  auto fail = [&](const io::Status& st) {
    w.rep.ok = false;
    w.rep.error = st.message();
    if (report) *report = w.rep;
    return st;
  };
  w.arena = files_.store == StoreKind::arena;
  if (w.arena && root_loc() == kNoLocator) {
    if (!empty_tree()) return fail({io::Errc::corrupt_page, "binary trie: no root record but the manifest names a non-empty root"});
    w.rep.ok = true;
    if (report) *report = w.rep;
    return {};
  }
  w.todo.push_back({root_loc(), files_.manifest.root_hash, {}, 0, 0});
  const ReadCounters before = w.arena ? reader_->counters() : ReadCounters{};
  const uint64_t total = files_.manifest.node_count;
  while (!w.todo.empty()) {
    const size_t n = std::min(w.todo.size(), kVerifyChunk);
    w.chunk.assign(w.todo.end() - ptrdiff_t(n), w.todo.end());
    w.todo.resize(w.todo.size() - n);
    if (io::Status st = w.arena ? verify_chunk_arena(w) : verify_chunk_rocks(w); !st) return fail(st);
    if (progress) progress(w.done_nodes, std::max(total, w.done_nodes));
  }
  if (io::Status st = finish_verify(w, before); !st) return fail(st);
  if (report) *report = w.rep;
  return {};
}

// The node at a proof's position: arena, its record; RocksDB, the blob at the key's path
// key of that depth (missing: an error). *where names it.
io::Status BintrieDb::read_prove_node(const Bytes32& key, const ProvePos& at, Node* node, std::string* where,
                                      uint64_t* records) {
  if (files_.store == StoreKind::arena) {
    *where = "binary trie " + bd::locator_name(at.loc);
    return read_node_sync(at.loc, node, records);
  }
  const std::vector<uint8_t> k = bintrie::blob_key(key.data(), at.depth);
  *where = "binary trie node at path key " + bd::hex(k);
  bool found = false;
  if (io::Status st = rocks_get(key.data(), at.depth, node, &found); !st) return st;
  if (!found) return {io::Errc::corrupt_page, *where + ": missing"};
  return {};
}

// The proof's last node, a stem (its hash and path checked): the key's own stem ends the
// proof with the value and the siblings inside the stem; another stem ends it as
// other_stem with that stem's subtree root.
io::Status BintrieDb::prove_at_stem(const bintrie::StemBlob& stem, const Bytes32& key, const ProvePos& at,
                                    const std::string& where, bintrie::KeyProof* p) {
  Bytes32 leaves[256];
  size_t j = 0;
  for (int i = 0; i < 256; ++i) {
    leaves[i] = Bytes32{};
    if ((stem.bitmap[i / 8] >> (7 - i % 8)) & 1) h_.hash(stem.values[j++].data(), 32, leaves[i].data());
  }
  bintrie::DenseStemTree dt;
  bintrie::dense_stem_tree(h_, leaves, &dt);
  Bytes32 stem_hash;
  bintrie::hash_stem_node(h_, stem.stem.data(), dt.root().data(), stem_hash.data());
  if (stem_hash != at.expect)
    return {io::Errc::corrupt_page, where + (at.depth == 0 ? ": root hash does not match the manifest"
                                                          : ": stem hash does not match its parent's entry")};
  if (!bd::same_prefix(stem.stem.data(), key.data(), at.depth))
    return {io::Errc::corrupt_page, where + ": stem does not continue its path"};
  p->stem = stem.stem;
  if (std::memcmp(stem.stem.data(), key.data(), 31) != 0) {
    p->end = bintrie::ProofEnd::other_stem;
    p->other_subtree_root = dt.root();
    return {};
  }
  p->end = bintrie::ProofEnd::key_stem;
  dt.siblings(key[31], p->stem_siblings);
  p->value = bd::stem_value(stem, key[31]);
  return {};
}

// A group on the proof's path (its hash checked): appends the siblings inside it down to
// the key's entry, then moves `at` to that entry's node; with no entry on the key's path
// the proof ends (empty) at the first empty node and *done is set.
io::Status BintrieDb::prove_in_group(const bintrie::GroupBlob& group, const std::vector<Locator>& children,
                                     const Bytes32& key, ProvePos& at, const std::string& where,
                                     bintrie::KeyProof* p, bool* done) {
  if (at.stem_only) return {io::Errc::corrupt_page, where + ": a group where its parent's entry ends in a stem"};
  if (at.depth >= kMaxDepth) return {io::Errc::corrupt_page, where + ": group at depth " + std::to_string(at.depth)};
  const std::vector<Bytes32> inner = bintrie::reconstruct_group(h_, group);
  if (inner[0] != at.expect)
    return {io::Errc::corrupt_page, where + (at.depth == 0 ? ": root hash does not match the manifest"
                                                          : ": group hash does not match its parent's entry")};
  const uint32_t pos = bd::key_bits(key.data(), at.depth, g_);
  const auto e = bd::find_entry(group, pos);
  unsigned r_end;
  if (e) {
    r_end = group.entries[*e].depth;
  } else {
    // The first empty node on the key's path inside the group.
    r_end = 1;
    while (r_end < g_ && group_node_hash(group, inner, r_end, pos >> (g_ - r_end)) != Bytes32{}) ++r_end;
  }
  for (unsigned t = 0; t < r_end; ++t) {
    const uint32_t q = (pos >> (g_ - t - 1)) ^ 1u;
    p->siblings.push_back(group_node_hash(group, inner, t + 1, q));
  }
  if (!e) {
    p->end = bintrie::ProofEnd::empty;
    *done = true;
    return {};
  }
  at.stem_only = r_end < g_;
  at.depth += r_end;
  at.expect = group.entries[*e].hash;
  if (files_.store == StoreKind::arena) at.loc = children[*e];
  return {};
}

io::Status BintrieDb::prove_key(const Bytes32& key, bintrie::KeyProof* p) {
  *p = {};
  if (empty_tree()) return {};
  // Each node's hash is checked, as a lookup's; the root's against the manifest.
  ProvePos at{root_loc(), 0, false, files_.manifest.root_hash};
  uint64_t records = 0;
  Node node;
  for (;;) {
    std::string where;
    if (io::Status st = read_prove_node(key, at, &node, &where, &records); !st) return st;
    if (!node.is_group) return prove_at_stem(node.stem, key, at, where, p);
    bool done = false;
    if (io::Status st = prove_in_group(node.group, node.children, key, at, where, p, &done); !st || done) return st;
  }
}

io::Status BintrieDb::prove(const state::StateKey& key, StateProof* out) {
  BintrieStateProof p;
  if (reader_) reader_->clear();  // proofs start cold (and the cache stays bounded)
  p.basic_data_key = bintrie::basic_data_key(ks_, key.address);
  p.code_hash_key = bintrie::code_hash_key(ks_, key.address);
  if (io::Status st = prove_key(p.basic_data_key, &p.basic_data); !st) return st;
  if (io::Status st = prove_key(p.code_hash_key, &p.code_hash); !st) return st;
  if (key.slot) {
    p.slot_key = bintrie::storage_slot_key(ks_, key.address, *key.slot);
    bintrie::KeyProof sp;
    if (io::Status st = prove_key(p.slot_key, &sp); !st) return st;
    p.slot = std::move(sp);
  }
  *out = std::move(p);
  return {};
}

}  // namespace

io::Status open_bintrie(DbFiles&& files, const DbOptions& o, std::unique_ptr<TreeDb>* out) {
  const io::StoreParams& p = files.manifest.params;
  if (p.tree_kind != io::TreeKind::bintrie) return {io::Errc::mismatch, "open_bintrie: the database does not hold a binary trie"};
  bintrie::Hasher h;
  if (io::Status st = bintrie_disk::hasher_for(p, &h); !st) return st;
  if (p.group_depth < 1 || p.group_depth > 8)
    return {io::Errc::mismatch, "binary trie group depth " + std::to_string(p.group_depth) + " out of range 1..8"};
  if (files.store == StoreKind::arena && !files.arena) return {io::Errc::bad_argument, "open_bintrie: arena store not open"};
  if (files.store == StoreKind::rocksdb && !files.rocks) return {io::Errc::bad_argument, "open_bintrie: RocksDB store not open"};
  const unsigned g = p.group_depth;
  *out = std::make_unique<BintrieDb>(std::move(files), h, g, o.verify_cache_pages, o.slot_key_accounts);
  return {};
}

}  // namespace st::persist
