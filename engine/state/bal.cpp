// bal: see bal.h. The encoder writes each list's payload first and inserts its header in
// front when the list closes (lists nest at most five deep, so the moves stay cheap); the
// decoder walks the items with kernels/rlp's hardened header decoder and checks every
// ordering rule as it goes, so the first violation is the one reported.
#include "engine/state/bal.h"

#include <algorithm>
#include <cstring>

#include "kernels/keccak256.h"
#include "kernels/rlp.h"

namespace st::state {

const char* bal_tree_name(BalTree t) {
  switch (t) {
    case BalTree::mpt: return "mpt";
    case BalTree::bintrie: return "bintrie";
    default: return "";
  }
}

namespace {

using kernels::RlpError;
using kernels::RlpItem;

// ---- encoder -----------------------------------------------------------------------------

class Writer {
 public:
  explicit Writer(std::vector<uint8_t>* out) : out_(*out) {}
  size_t open() const { return out_.size(); }
  void close(size_t start) {
    const size_t payload = out_.size() - start;
    uint8_t hdr[9];
    const size_t n = size_t(kernels::rlp_put_list_header(hdr, payload) - hdr);
    out_.insert(out_.begin() + ptrdiff_t(start), hdr, hdr + n);
  }
  void bytes(const uint8_t* p, size_t n) {
    const size_t at = out_.size();
    out_.resize(at + kernels::rlp_string_size(p, n));
    kernels::rlp_put_string(out_.data() + at, p, n);
  }
  void uint_be(const uint8_t* be, size_t n) {
    const size_t at = out_.size();
    out_.resize(at + kernels::rlp_uint_be_size(be, n));
    kernels::rlp_put_uint_be(out_.data() + at, be, n);
  }
  void u64(uint64_t v) {
    const size_t at = out_.size();
    out_.resize(at + kernels::rlp_uint_size(v));
    kernels::rlp_put_uint(out_.data() + at, v);
  }
  void empty_list() { out_.push_back(0xc0); }

 private:
  std::vector<uint8_t>& out_;
};

void write_bal(Writer& w, const BlockAccessList& bal) {
  const size_t top = w.open();
  for (const AccountChanges& a : bal.accounts) {
    const size_t acc = w.open();
    w.bytes(a.address.data(), a.address.size());
    size_t l = w.open();
    for (const SlotChanges& s : a.storage_changes) {
      const size_t sl = w.open();
      w.uint_be(s.slot.data(), 32);
      const size_t ch = w.open();
      for (const StorageChange& c : s.changes) {
        const size_t e = w.open();
        w.u64(c.index);
        w.uint_be(c.value.data(), 32);
        w.close(e);
      }
      w.close(ch);
      w.close(sl);
    }
    w.close(l);
    l = w.open();
    for (const Hash32& r : a.storage_reads) w.uint_be(r.data(), 32);
    w.close(l);
    l = w.open();
    for (const BalanceChange& c : a.balance_changes) {
      const size_t e = w.open();
      w.u64(c.index);
      w.uint_be(c.post_balance.data(), 32);
      w.close(e);
    }
    w.close(l);
    l = w.open();
    for (const NonceChange& c : a.nonce_changes) {
      const size_t e = w.open();
      w.u64(c.index);
      w.u64(c.nonce);
      w.close(e);
    }
    w.close(l);
    l = w.open();
    for (const CodeChange& c : a.code_changes) {
      const size_t e = w.open();
      w.u64(c.index);
      w.bytes(c.code.data(), c.code.size());
      w.close(e);
    }
    w.close(l);
    w.close(acc);
  }
  w.close(top);
}

void write_block(Writer& w, const Block& b) {
  const size_t top = w.open();
  const size_t h = w.open();
  w.u64(b.header.number);
  const char* tree = bal_tree_name(b.header.tree);
  w.bytes(reinterpret_cast<const uint8_t*>(tree), std::strlen(tree));
  if (b.header.pre_state_root) w.bytes(b.header.pre_state_root->data(), 32);
  else w.bytes(nullptr, 0);
  if (b.header.tx_count) w.u64(*b.header.tx_count);
  else w.empty_list();
  const size_t txs = w.open();
  for (const TxInfo& t : b.header.txs) {
    const size_t e = w.open();
    w.u64(t.gas_used);
    w.u64(t.calls);
    w.close(e);
  }
  w.close(txs);
  w.close(h);
  write_bal(w, b.bal);
  w.close(top);
}

// ---- decoder -----------------------------------------------------------------------------

std::string hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s = "0x";
  for (size_t i = 0; i < n; ++i) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}

class Parser {
 public:
  Parser(std::span<const uint8_t> in, uint64_t block, std::string* err)
      : base_(in.data()), size_(in.size()), block_(block), err_(err) {}

  void set_block(uint64_t b) { block_ = b; }
  void set_account(const std::string& a) { account_ = a; }

  bool fail(const uint8_t* at, const std::string& what) {
    std::string m = "block " + std::to_string(block_) + ": ";
    if (!account_.empty()) m += "account " + account_ + ": ";
    m += "byte offset " + std::to_string(size_t(at - base_)) + ": " + what;
    *err_ = m;
    return false;
  }
  const uint8_t* end() const { return base_ + size_; }

  // The item starting at p (within [p, limit)).
  bool item(const uint8_t* p, const uint8_t* limit, RlpItem* out) {
    const RlpError e = kernels::rlp_decode_item(p, size_t(limit - p), out);
    if (e != RlpError::ok) return fail(p, std::string("bad RLP: ") + kernels::rlp_error_name(e));
    return true;
  }
  // The top-level items of a list's payload.
  bool items(const RlpItem& list, const char* what, std::vector<RlpItem>* out) {
    out->clear();
    if (!list.is_list) return fail(list.payload - list.header_len, std::string(what) + ": expected a list");
    const uint8_t* p = list.payload;
    const uint8_t* limit = list.payload + list.payload_len;
    while (p < limit) {
      RlpItem it;
      if (!item(p, limit, &it)) return false;
      out->push_back(it);
      p += it.size();
    }
    return true;
  }
  bool fields(const RlpItem& list, const char* what, size_t count, std::vector<RlpItem>* out) {
    if (!items(list, what, out)) return false;
    if (out->size() != count)
      return fail(start(list), std::string(what) + ": expected " + std::to_string(count) + " items, found " +
                                   std::to_string(out->size()));
    return true;
  }
  static const uint8_t* start(const RlpItem& it) { return it.payload - it.header_len; }

  // A canonical unsigned integer of at most max_bytes bytes, as big-endian into out[32].
  bool uint_be(const RlpItem& it, const char* what, size_t max_bytes, uint8_t* out32) {
    if (it.is_list) return fail(start(it), std::string(what) + ": expected an integer, found a list");
    if (it.payload_len > max_bytes)
      return fail(start(it), std::string(what) + ": integer of " + std::to_string(it.payload_len) +
                                 " bytes, at most " + std::to_string(max_bytes) + " allowed");
    if (it.payload_len > 0 && it.payload[0] == 0)
      return fail(start(it), std::string(what) + ": non-canonical integer (leading zero byte)");
    std::memset(out32, 0, 32);
    if (it.payload_len) std::memcpy(out32 + 32 - it.payload_len, it.payload, it.payload_len);
    return true;
  }
  bool u64(const RlpItem& it, const char* what, size_t max_bytes, uint64_t* out) {
    uint8_t b[32];
    if (!uint_be(it, what, max_bytes, b)) return false;
    uint64_t v = 0;
    for (size_t i = 24; i < 32; ++i) v = (v << 8) | b[i];
    *out = v;
    return true;
  }
  bool index(const RlpItem& it, std::optional<uint32_t> tx_count, int64_t prev, uint32_t* out) {
    uint64_t v;
    if (!u64(it, "block access index", 4, &v)) return false;
    if (tx_count && v > uint64_t(*tx_count) + 1)
      return fail(start(it), "block access index " + std::to_string(v) + " past tx_count + 1 = " +
                                 std::to_string(uint64_t(*tx_count) + 1));
    if (int64_t(v) <= prev)
      return fail(start(it), "block access index " + std::to_string(v) + " not after " + std::to_string(prev) +
                                 " (indices must be strictly increasing)");
    *out = uint32_t(v);
    return true;
  }

  bool account(const RlpItem& acc_item, std::optional<uint32_t> tx_count, const Address* prev, AccountChanges* a);
  bool storage_changes(const RlpItem& list, std::optional<uint32_t> tx_count, AccountChanges* a,
                       std::vector<RlpItem>& l, std::vector<RlpItem>& e);
  bool storage_reads(const RlpItem& list, AccountChanges* a, std::vector<RlpItem>& l);
  bool field_changes(const RlpItem* f, std::optional<uint32_t> tx_count, AccountChanges* a, std::vector<RlpItem>& l,
                     std::vector<RlpItem>& e);
  bool bal(const RlpItem& list, std::optional<uint32_t> tx_count, BlockAccessList* out);
  bool header(const RlpItem& list, BlockHeader* out);

 private:
  const uint8_t* base_;
  size_t size_;
  uint64_t block_;
  std::string account_;
  std::string* err_;
};

// storage_changes: slots strictly increasing, each with a non-empty change list whose
// block access indices strictly increase. l, e: scratch lists.
bool Parser::storage_changes(const RlpItem& list, std::optional<uint32_t> tx_count, AccountChanges* a,
                             std::vector<RlpItem>& l, std::vector<RlpItem>& e) {
  if (!items(list, "storage_changes", &l)) return false;
  a->storage_changes.resize(l.size());
  for (size_t i = 0; i < l.size(); ++i) {
    SlotChanges& s = a->storage_changes[i];
    if (!fields(l[i], "slot changes", 2, &e)) return false;
    if (!uint_be(e[0], "slot", 32, s.slot.data())) return false;
    if (i > 0 && !(a->storage_changes[i - 1].slot < s.slot))
      return fail(start(e[0]), "slot " + hex(s.slot.data(), 32) + " not after the previous written slot (slots must be strictly increasing)");
    std::vector<RlpItem> ch, kv;
    if (!items(e[1], "storage changes of a slot", &ch)) return false;
    if (ch.empty()) return fail(start(e[1]), "slot " + hex(s.slot.data(), 32) + " has an empty change list");
    s.changes.resize(ch.size());
    int64_t pi = -1;
    for (size_t k = 0; k < ch.size(); ++k) {
      if (!fields(ch[k], "storage change", 2, &kv)) return false;
      if (!index(kv[0], tx_count, pi, &s.changes[k].index)) return false;
      pi = s.changes[k].index;
      if (!uint_be(kv[1], "storage value", 32, s.changes[k].value.data())) return false;
    }
  }
  return true;
}

// storage_reads: slots strictly increasing, none of them also written.
bool Parser::storage_reads(const RlpItem& list, AccountChanges* a, std::vector<RlpItem>& l) {
  if (!items(list, "storage_reads", &l)) return false;
  a->storage_reads.resize(l.size());
  size_t w = 0;  // merge cursor over the written slots (both sorted)
  for (size_t i = 0; i < l.size(); ++i) {
    Hash32& r = a->storage_reads[i];
    if (!uint_be(l[i], "read slot", 32, r.data())) return false;
    if (i > 0 && !(a->storage_reads[i - 1] < r))
      return fail(start(l[i]), "read slot " + hex(r.data(), 32) + " not after the previous read slot (reads must be strictly increasing)");
    while (w < a->storage_changes.size() && a->storage_changes[w].slot < r) ++w;
    if (w < a->storage_changes.size() && a->storage_changes[w].slot == r)
      return fail(start(l[i]), "slot " + hex(r.data(), 32) + " is both written and read");
  }
  return true;
}

// balance_changes, nonce_changes, code_changes: (index, value) pairs, indices strictly
// increasing.
bool Parser::field_changes(const RlpItem* f, std::optional<uint32_t> tx_count, AccountChanges* a,
                           std::vector<RlpItem>& l, std::vector<RlpItem>& e) {
  if (!items(f[0], "balance_changes", &l)) return false;
  a->balance_changes.resize(l.size());
  int64_t pi = -1;
  for (size_t i = 0; i < l.size(); ++i) {
    if (!fields(l[i], "balance change", 2, &e)) return false;
    if (!index(e[0], tx_count, pi, &a->balance_changes[i].index)) return false;
    pi = a->balance_changes[i].index;
    if (!uint_be(e[1], "balance", 32, a->balance_changes[i].post_balance.data())) return false;
  }
  if (!items(f[1], "nonce_changes", &l)) return false;
  a->nonce_changes.resize(l.size());
  pi = -1;
  for (size_t i = 0; i < l.size(); ++i) {
    if (!fields(l[i], "nonce change", 2, &e)) return false;
    if (!index(e[0], tx_count, pi, &a->nonce_changes[i].index)) return false;
    pi = a->nonce_changes[i].index;
    if (!u64(e[1], "nonce", 8, &a->nonce_changes[i].nonce)) return false;
  }
  if (!items(f[2], "code_changes", &l)) return false;
  a->code_changes.resize(l.size());
  pi = -1;
  for (size_t i = 0; i < l.size(); ++i) {
    if (!fields(l[i], "code change", 2, &e)) return false;
    if (!index(e[0], tx_count, pi, &a->code_changes[i].index)) return false;
    pi = a->code_changes[i].index;
    if (e[1].is_list) return fail(start(e[1]), "code: expected a byte string, found a list");
    a->code_changes[i].code.assign(e[1].payload, e[1].payload + e[1].payload_len);
  }
  return true;
}

bool Parser::account(const RlpItem& acc_item, std::optional<uint32_t> tx_count, const Address* prev,
                     AccountChanges* a) {
  set_account("");
  std::vector<RlpItem> f, l, e;
  if (!items(acc_item, "account changes", &f)) return false;
  if (f.empty() || f[0].is_list) return fail(start(acc_item), "account changes: expected an address first");
  if (f[0].payload_len != 20)
    return fail(start(f[0]), "address of " + std::to_string(f[0].payload_len) + " bytes, expected 20");
  std::memcpy(a->address.data(), f[0].payload, 20);
  set_account(hex(a->address.data(), 20));
  if (f.size() != 6)
    return fail(start(acc_item), "account changes: expected 6 items, found " + std::to_string(f.size()));
  if (prev && !(*prev < a->address))
    return fail(start(f[0]), "account not after " + hex(prev->data(), 20) +
                                 " (accounts must be strictly increasing by address)");
  if (!storage_changes(f[1], tx_count, a, l, e)) return false;
  if (!storage_reads(f[2], a, l)) return false;
  if (!field_changes(&f[3], tx_count, a, l, e)) return false;
  set_account("");
  return true;
}

bool Parser::bal(const RlpItem& list, std::optional<uint32_t> tx_count, BlockAccessList* out) {
  std::vector<RlpItem> accs;
  if (!items(list, "block access list", &accs)) return false;
  out->accounts.assign(accs.size(), AccountChanges{});
  for (size_t i = 0; i < accs.size(); ++i)
    if (!account(accs[i], tx_count, i ? &out->accounts[i - 1].address : nullptr, &out->accounts[i])) return false;
  return true;
}

// Bytes from the input quoted in an error: printable ASCII as is, every other byte (a
// newline included) as \xHH, so the message stays one line.
static std::string printable(const std::string& raw) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (const unsigned char c : raw) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += char(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

bool Parser::header(const RlpItem& list, BlockHeader* out) {
  std::vector<RlpItem> f, txs, kv;
  if (!fields(list, "block header", 5, &f)) return false;
  if (!u64(f[0], "block number", 8, &out->number)) return false;
  set_block(out->number);
  if (f[1].is_list) return fail(start(f[1]), "tree: expected a string");
  const std::string tree(reinterpret_cast<const char*>(f[1].payload), f[1].payload_len);
  if (tree.empty()) out->tree = BalTree::any;
  else if (tree == "mpt") out->tree = BalTree::mpt;
  else if (tree == "bintrie") out->tree = BalTree::bintrie;
  else return fail(start(f[1]), "unknown tree \"" + printable(tree.substr(0, 16)) + "\" (mpt, bintrie or empty)");
  if (f[2].is_list || (f[2].payload_len != 0 && f[2].payload_len != 32))
    return fail(start(f[2]), "pre-state root: expected 32 bytes or empty");
  if (f[2].payload_len == 32) {
    Hash32 r;
    std::memcpy(r.data(), f[2].payload, 32);
    out->pre_state_root = r;
  }
  if (f[3].is_list) {
    if (f[3].payload_len != 0) return fail(start(f[3]), "tx_count: expected an integer or the empty list");
    out->tx_count.reset();
  } else {
    uint64_t n;
    if (!u64(f[3], "tx_count", 4, &n)) return false;
    out->tx_count = uint32_t(n);
  }
  if (!items(f[4], "transactions", &txs)) return false;
  if (!txs.empty() && (!out->tx_count || txs.size() != *out->tx_count))
    return fail(start(f[4]), std::to_string(txs.size()) + " transaction entries for tx_count " +
                                 (out->tx_count ? std::to_string(*out->tx_count) : std::string("unknown")));
  out->txs.resize(txs.size());
  for (size_t i = 0; i < txs.size(); ++i) {
    if (!fields(txs[i], "transaction", 2, &kv)) return false;
    if (!u64(kv[0], "gas_used", 8, &out->txs[i].gas_used)) return false;
    if (!u64(kv[1], "calls", 8, &out->txs[i].calls)) return false;
  }
  return true;
}

// A bare BAL: a list whose first item is a list whose first item is a 20-byte string (a
// block's first item is its header, whose first item is a number of at most 8 bytes).
bool looks_like_bare_bal(const RlpItem& top) {
  if (!top.is_list) return false;
  if (top.payload_len == 0) return true;  // the empty BAL
  RlpItem first, inner;
  if (kernels::rlp_decode_item(top.payload, top.payload_len, &first) != RlpError::ok || !first.is_list) return false;
  if (first.payload_len == 0) return false;
  if (kernels::rlp_decode_item(first.payload, first.payload_len, &inner) != RlpError::ok) return false;
  return !inner.is_list && inner.payload_len == 20;
}

}  // namespace

std::vector<uint8_t> encode_bal(const BlockAccessList& bal) {
  std::vector<uint8_t> out;
  Writer w(&out);
  write_bal(w, bal);
  return out;
}

Hash32 bal_hash(const BlockAccessList& bal) {
  const std::vector<uint8_t> rlp = encode_bal(bal);
  Hash32 h;
  kernels::keccak256(rlp.data(), rlp.size(), h.data());
  return h;
}

std::vector<uint8_t> encode_block(const Block& block) {
  std::vector<uint8_t> out;
  Writer w(&out);
  write_block(w, block);
  return out;
}

std::vector<uint8_t> encode_blocks(std::span<const Block> blocks) {
  std::vector<uint8_t> out;
  Writer w(&out);
  for (const Block& b : blocks) write_block(w, b);
  return out;
}

bool decode_bal(std::span<const uint8_t> bytes, std::optional<uint32_t> tx_count, BlockAccessList* out,
                std::string* error, uint64_t block) {
  Parser p(bytes, block, error);
  RlpItem top;
  if (bytes.empty()) return p.fail(bytes.data(), "no bytes (expected a block access list)");
  if (!p.item(bytes.data(), p.end(), &top)) return false;
  if (top.size() != bytes.size()) return p.fail(bytes.data() + top.size(), "trailing bytes after the block access list");
  return p.bal(top, tx_count, out);
}

bool decode_blocks(std::span<const uint8_t> bytes, std::vector<Block>* out, std::string* error) {
  out->clear();
  Parser p(bytes, 0, error);
  if (bytes.empty()) return p.fail(bytes.data(), "empty file (expected blocks or a block access list)");
  const uint8_t* at = bytes.data();
  RlpItem top;
  if (!p.item(at, p.end(), &top)) return false;
  if (looks_like_bare_bal(top)) {
    if (top.size() != bytes.size()) return p.fail(at + top.size(), "trailing bytes after the block access list");
    Block b;
    if (!p.bal(top, std::nullopt, &b.bal)) return false;
    out->push_back(std::move(b));
    return true;
  }
  std::vector<RlpItem> f;
  while (true) {
    p.set_block(out->size());
    if (!p.fields(top, "block", 2, &f)) return false;
    Block b;
    if (!p.header(f[0], &b.header)) return false;
    if (!p.bal(f[1], b.header.tx_count, &b.bal)) return false;
    out->push_back(std::move(b));
    at += top.size();
    if (at == p.end()) return true;
    p.set_block(out->size());
    if (!p.item(at, p.end(), &top)) return false;
  }
}

std::string bal_check(const BlockAccessList& bal, std::optional<uint32_t> tx_count) {
  // The decoder is the one definition of the rules: encode and decode.
  const std::vector<uint8_t> rlp = encode_bal(bal);
  BlockAccessList back;
  std::string err;
  if (!decode_bal(rlp, tx_count, &back, &err)) return err;
  return {};
}

}  // namespace st::state
