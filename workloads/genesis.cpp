// genesis: see genesis.h. One pass: nlohmann's SAX parser feeds GenesisSax, a state machine
// over a stack of frames (one per open object or array, at most kMaxDepth), which converts each
// account as its fields arrive and appends it to the allocation in file order. Work and memory
// are linear in the input: per key a constant number of operations (duplicate keys are found
// with a per-object hash set; duplicate addresses, which the alloc object may hold by the
// million, by one sort at the end). Errors are returned as one line:
// "<source>: account <addr>: <what>".
#include "workloads/genesis.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/bucket_sort.h"
#include "workloads/genesis_values.h"
#include "workloads/hex_swar.h"
#include "workloads/huge_pages.h"
#include "workloads/input_file.h"
#include "workloads/u256.h"

namespace st::workloads {

namespace {

using json = nlohmann::json;
using st::state::Account;
using st::state::Address;
using st::state::Hash32;

// A genesis file nests 4 deep ({alloc: {addr: {storage: {}}}}); go-ethereum's "config" a few
// more. Deeper input is refused before it can cost memory.
constexpr size_t kMaxDepth = 64;

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

// An address key as written: the 20 bytes plus how they were spelled (prefix and the case of
// each of the 40 digits), so that "the same key twice" and "the same address spelled
// differently" can be told apart and the key can be quoted exactly as in the file.
struct AddressKey {
  Address address{};
  uint64_t spelling = 0;  // bits 0..39: digit i is an upper-case letter; bits 40..41: prefix (0 none, 1 "0x", 2 "0X")
};

std::variant<AddressKey, std::string> parse_address(std::string_view text) {
  AddressKey k;
  std::string_view digits = text;
  if (digits.size() >= 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    k.spelling = uint64_t(digits[1] == 'x' ? 1 : 2) << 40;
    digits.remove_prefix(2);
  }
  if (digits.size() != 40) return std::string("address is not 20 bytes (40 hex digits)");
  if constexpr (hex_swar::kSwar) {
    for (size_t w = 0; w < 5; ++w) {
      unsigned upper = 0;
      if (!hex_swar::decode8(digits.data() + 8 * w, k.address.data() + 4 * w, &upper))
        return "bad address: not a hex string: " + quote_for_error(text);
      k.spelling |= uint64_t(upper) << (8 * w);
    }
    return k;
  }
  for (size_t i = 0; i < 40; ++i) {
    const char c = digits[i];
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') { d = c - 'A' + 10; k.spelling |= uint64_t(1) << i; }
    else return "bad address: not a hex string: " + quote_for_error(text);
    k.address[i / 2] |= uint8_t(i % 2 ? d : d << 4);
  }
  return k;
}

std::string address_text(const AddressKey& k) {
  static constexpr char kLower[] = "0123456789abcdef";
  static constexpr char kUpper[] = "0123456789ABCDEF";
  const unsigned prefix = unsigned(k.spelling >> 40) & 3;
  std::string s = prefix == 1 ? "0x" : prefix == 2 ? "0X" : "";
  for (size_t i = 0; i < 40; ++i) {
    const unsigned d = i % 2 ? k.address[i / 2] & 15 : k.address[i / 2] >> 4;
    s += ((k.spelling >> i) & 1) ? kUpper[d] : kLower[d];
  }
  return s;
}

std::variant<Hash32, std::string> parse_hash32(std::string_view s) {
  auto bytes = parse_hex_bytes(s, false);
  if (auto* err = std::get_if<std::string>(&bytes)) return *err;
  const auto& b = std::get<std::vector<uint8_t>>(bytes);
  if (b.size() != 32) return "must be 32 bytes: " + quote_for_error(s);
  Hash32 out{};
  std::memcpy(out.data(), b.data(), 32);
  return out;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// What the next value in a frame is.
enum class Target : uint8_t {
  Root, Alloc, Account, Balance, Nonce, Code, Storage, SlotValue,
  StateRoot, BlockHash, Network, AccountCount, Ignore,
};

enum class Ctx : uint8_t { Top, Alloc, Account, Storage, Other };

// A JSON value as the SAX callbacks deliver it, for one dispatch function.
enum class Kind : uint8_t { Null, Boolean, Negative, Unsigned, Float, String, Object, Array };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Null: return "null";
    case Kind::Boolean: return "boolean";
    case Kind::Negative: case Kind::Unsigned: case Kind::Float: return "number";
    case Kind::String: return "string";
    case Kind::Object: return "object";
    case Kind::Array: return "array";
  }
  return "value";
}

struct Frame {
  Ctx ctx = Ctx::Other;
  bool is_object = true;
  Target next = Target::Ignore;
  uint8_t fields_seen = 0;              // Account: balance, nonce, code, storage (bits 0..3)
  bool slot_ok = false;                 // Storage: the current key parsed
  Hash32 slot{};                       // Storage: the current key
  std::string key;                      // the current key (objects), for paths and messages
  bool key_is_account = false;          // Alloc / Top: the current key is the address of the
                                        // account being read (not copied; see current_key())
  std::unordered_set<std::string> keys; // keys seen in this object (not for Alloc / candidate keys)
};

// A scalar meta field of the wrapped form, kept as written until the end.
struct MetaField {
  bool present = false;
  Kind kind = Kind::Null;
  std::string text;
  uint64_t number = 0;
};

// The accounts of one object (the alloc object, or the top-level object read as a bare alloc).
struct AccountList {
  std::vector<std::pair<Address, Account>> accounts;
  std::vector<uint64_t> spellings;  // parallel to accounts
};

class GenesisSax {
 public:
  explicit GenesisSax(const std::string& source) : source_(source) { frames_.reserve(kMaxDepth); }

  // nlohmann::json_sax interface.
  bool null() { return scalar(Kind::Null, {}, 0); }
  bool boolean(bool) { return scalar(Kind::Boolean, {}, 0); }
  bool number_integer(json::number_integer_t v) {
    return v < 0 ? scalar(Kind::Negative, {}, 0) : scalar(Kind::Unsigned, {}, uint64_t(v));
  }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(Kind::Unsigned, {}, v); }
  bool number_float(json::number_float_t, const std::string& raw) { return scalar(Kind::Float, raw, 0); }
  bool string(std::string& s) { return scalar(Kind::String, s, 0); }
  bool binary(json::binary_t&) { return scalar(Kind::Null, {}, 0); }  // not produced by the JSON reader
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k);
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) {
    if (error_.empty()) error_ = source_ + ": malformed JSON: " + one_line(ex.what());
    return false;
  }

  // After a successful pass: the result, or the first error.
  std::variant<GenesisFile, std::string> finish();
  const std::string& error() const { return error_; }

 private:
  bool fail(const std::string& what) {
    if (error_.empty()) error_ = source_ + ": " + what;
    return false;
  }
  // An error in the account being read: fatal in the alloc object; for a top-level key it is
  // kept and reported only if the file turns out to be a bare alloc (no "alloc" key).
  bool account_error(const std::string& what);
  std::optional<std::string> duplicate_error(const AccountList& list, size_t n, const char* where) const;
  std::string key_path() const;
  Target next_target() const {
    if (frames_.empty()) return Target::Root;
    return frames_.back().is_object ? frames_.back().next : Target::Ignore;
  }
  Account& account() { return current_list_->accounts.back().second; }

  bool scalar(Kind kind, std::string_view text, uint64_t number);
  bool key_wrapped(Frame& f, const std::string& k);
  bool key_address(Frame& f, const std::string& k);
  bool key_field(Frame& f, const std::string& k);
  bool key_slot(Frame& f, const std::string& k);
  bool slot_value(Kind kind, std::string_view text);
  bool open(bool is_object);
  bool close();
  bool push(Ctx ctx, bool is_object);

  const std::string& source_;
  std::vector<Frame> frames_;
  std::string error_;
  std::string deferred_error_;           // first error among top-level keys read as accounts
  bool alloc_seen_ = false;
  AccountList alloc_;                    // "alloc"
  AccountList top_;                      // top-level keys read as accounts (bare form)
  AccountList* current_list_ = nullptr;  // the list of the account being read
  bool current_parsed_ = false;          // its address parsed (then it is the list's last account)
  const std::string* current_bad_key_ = nullptr;  // else its key as written (in its parent frame)
  // The key of the account being read, as written in the file.
  std::string current_key() const {
    if (!current_parsed_) return *current_bad_key_;
    return address_text(AddressKey{current_list_->accounts.back().first, current_list_->spellings.back()});
  }
  MetaField state_root_, block_hash_, network_, account_count_;
};

bool GenesisSax::push(Ctx ctx, bool is_object) {
  if (frames_.size() >= kMaxDepth)
    return fail("JSON nested deeper than " + std::to_string(kMaxDepth) + " levels" +
                (frames_.empty() ? "" : " (in " + key_path() + ")"));
  Frame& f = frames_.emplace_back();
  f.ctx = ctx;
  f.is_object = is_object;
  return true;
}

std::string GenesisSax::key_path() const {
  std::string p;
  for (size_t i = 0; i + 1 < frames_.size(); ++i) {
    const Frame& f = frames_[i];
    if (!f.is_object) { p += "[]"; continue; }
    if (!p.empty()) p += '.';
    p += f.key_is_account ? current_key() : f.key;
  }
  return p;
}

bool GenesisSax::account_error(const std::string& what) {
  if (current_list_ == &alloc_) {
    const size_t n = alloc_.accounts.size();
    if (auto dup = duplicate_error(alloc_, n, "in alloc")) return fail(*dup);
    return fail("account " + quote_for_error(current_key()) + ": " + what);
  }
  if (deferred_error_.empty()) {
    if (auto dup = duplicate_error(top_, top_.accounts.size(), "at the top level")) deferred_error_ = *dup;
    else deferred_error_ = "account " + quote_for_error(current_key()) + ": " + what;
  }
  return true;
}

// The first account (in file order, among the first n) whose address appeared before: the
// message a sequential check would give at that account.
std::optional<std::string> GenesisSax::duplicate_error(const AccountList& list, size_t n, const char* where) const {
  // The address as three big-endian integers: integer compares instead of memcmp calls.
  struct Key {
    uint64_t a, b;
    uint32_t c, index;
    bool operator==(const Key& o) const { return a == o.a && b == o.b && c == o.c; }
  };
  auto be = [](const uint8_t* p, size_t len) {
    uint64_t v = 0;
    for (size_t i = 0; i < len; ++i) v = v << 8 | p[i];
    return v;
  };
  std::vector<Key> order(n);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = list.accounts[i].first.data();
    order[i] = {be(p, 8), be(p + 8, 8), uint32_t(be(p + 16, 4)), uint32_t(i)};
  }
  bucket_sort(order, [](const Key& k) { return k.a; }, [](const Key& x, const Key& y) {
    if (x.a != y.a) return x.a < y.a;
    if (x.b != y.b) return x.b < y.b;
    if (x.c != y.c) return x.c < y.c;
    return x.index < y.index;
  });
  size_t best = n;
  bool exact = false;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && order[j] == order[i]) ++j;
    if (j - i > 1 && order[i + 1].index < best) {
      best = order[i + 1].index;
      exact = false;
      for (size_t k = i; k < j && order[k].index < best; ++k)
        exact |= list.spellings[order[k].index] == list.spellings[best];
    }
    i = j;
  }
  if (best == n) return std::nullopt;
  const std::string text = address_text(AddressKey{list.accounts[best].first, list.spellings[best]});
  if (exact) return "duplicate JSON key " + quote_for_error(text) + " " + where;
  return "account " + quote_for_error(text) + ": duplicate address (the same 20 bytes appear earlier, spelled differently)";
}

// A top-level key of the wrapped form ("alloc", "expected_state_root", ...), or any top-level
// key once the file is known not to be a bare alloc: sets the frame's next target.
bool GenesisSax::key_wrapped(Frame& f, const std::string& k) {
  if (!f.keys.insert(k).second) return fail("duplicate JSON key " + quote_for_error(k) + " at the top level");
  f.next = k == "alloc" ? Target::Alloc
           : k == "expected_state_root" ? Target::StateRoot
           : k == "expected_genesis_block_hash" ? Target::BlockHash
           : k == "network" ? Target::Network
           : k == "accounts" ? Target::AccountCount
                             : Target::Ignore;
  if (k == "alloc") alloc_seen_ = true;
  return true;
}

// An account's address key (in "alloc", or at the top level of a bare alloc).
bool GenesisSax::key_address(Frame& f, const std::string& k) {
  AccountList& list = f.ctx == Ctx::Alloc ? alloc_ : top_;
  current_list_ = &list;
  auto a = parse_address(k);
  if (auto* e = std::get_if<std::string>(&a)) {
    f.key = k;
    current_parsed_ = false;
    current_bad_key_ = &f.key;
    f.next = Target::Ignore;
    return account_error(*e);
  }
  const AddressKey& ak = std::get<AddressKey>(a);
  reserve_one_more(list.accounts);
  list.accounts.emplace_back(ak.address, Account{});
  list.spellings.push_back(ak.spelling);
  current_parsed_ = true;
  f.key_is_account = true;
  f.next = Target::Account;
  return true;
}

// A field of an account object: balance, nonce, code, storage (each once); anything else is an error.
bool GenesisSax::key_field(Frame& f, const std::string& k) {
  static constexpr const char* kFields[] = {"balance", "nonce", "code", "storage"};
  static constexpr Target kTargets[] = {Target::Balance, Target::Nonce, Target::Code, Target::Storage};
  for (int i = 0; i < 4; ++i) {
    if (k != kFields[i]) continue;
    if (f.fields_seen & (1u << i)) return fail("duplicate JSON key " + quote_for_error(k) + " in " + key_path());
    f.fields_seen |= uint8_t(1u << i);
    f.next = kTargets[i];
    return true;
  }
  if (!f.keys.insert(k).second) return fail("duplicate JSON key " + quote_for_error(k) + " in " + key_path());
  f.next = Target::Ignore;
  return account_error("unknown field " + quote_for_error(k) + " (expected balance, nonce, code, storage)");
}

// A storage slot key (go-ethereum's spellings of a 32-byte word).
bool GenesisSax::key_slot(Frame& f, const std::string& k) {
  if (!f.keys.insert(k).second) return fail("duplicate JSON key " + quote_for_error(k) + " in " + key_path());
  f.next = Target::SlotValue;
  auto slot = geth_storage_word(k);
  f.slot_ok = std::holds_alternative<Hash32>(slot);
  if (!f.slot_ok) return account_error("storage slot " + quote_for_error(k) + ": " + std::get<std::string>(slot));
  f.slot = std::get<Hash32>(slot);
  return true;
}

bool GenesisSax::key(std::string& k) {
  Frame& f = frames_.back();
  f.key_is_account = false;
  if (f.ctx != Ctx::Alloc) f.key = k;  // (alloc keys: see current_key())
  switch (f.ctx) {
    case Ctx::Top:
      if (k == "alloc" || k == "expected_state_root" || k == "expected_genesis_block_hash" || k == "network" ||
          k == "accounts" || alloc_seen_ || !deferred_error_.empty())
        return key_wrapped(f, k);
      return key_address(f, k);
    case Ctx::Alloc: return key_address(f, k);
    case Ctx::Account: return key_field(f, k);
    case Ctx::Storage: return key_slot(f, k);
    case Ctx::Other:
      if (!f.keys.insert(k).second) return fail("duplicate JSON key " + quote_for_error(k) + " in " + key_path());
      f.next = Target::Ignore;
      return true;
  }
  return true;
}

bool GenesisSax::open(bool is_object) {
  const Kind kind = is_object ? Kind::Object : Kind::Array;
  switch (next_target()) {
    case Target::Root:
      if (!is_object) return fail("top level must be a JSON object, not array");
      return push(Ctx::Top, true);
    case Target::Alloc:
      if (!is_object) return fail("\"alloc\" must be an object, not array");
      return push(Ctx::Alloc, true);
    case Target::Account:
      if (is_object) return push(Ctx::Account, true);
      return account_error("must be a balance string or an object, not array") && push(Ctx::Other, false);
    case Target::Storage:
      if (is_object) return push(Ctx::Storage, true);
      return account_error("storage must be an object, not array") && push(Ctx::Other, false);
    case Target::Balance:
      if (!account_error(std::string("balance: must be a string or an integer, not ") + kind_name(kind))) return false;
      return push(Ctx::Other, is_object);
    case Target::Nonce:
      if (!account_error(std::string("nonce: must be an integer or a string, not ") + kind_name(kind))) return false;
      return push(Ctx::Other, is_object);
    case Target::Code:
      if (!account_error(std::string("code must be a 0x-hex string, not ") + kind_name(kind))) return false;
      return push(Ctx::Other, is_object);
    case Target::SlotValue:
      if (!account_error("storage slot " + quote_for_error(frames_.back().key) + ": value must be a hex string"))
        return false;
      return push(Ctx::Other, is_object);
    case Target::StateRoot: state_root_ = {true, kind, {}, 0}; return push(Ctx::Other, is_object);
    case Target::BlockHash: block_hash_ = {true, kind, {}, 0}; return push(Ctx::Other, is_object);
    case Target::Network: network_ = {true, kind, {}, 0}; return push(Ctx::Other, is_object);
    case Target::AccountCount: account_count_ = {true, kind, {}, 0}; return push(Ctx::Other, is_object);
    case Target::Ignore: return push(Ctx::Other, is_object);
  }
  return true;
}

bool GenesisSax::close() {
  const Frame& f = frames_.back();
  const bool account_end = f.ctx == Ctx::Account && !(f.fields_seen & 1);
  frames_.pop_back();
  if (account_end) return account_error("missing balance");
  return true;
}

// An account's "balance" value: a go-ethereum balance string or a JSON integer.
std::variant<U256, std::string> balance_value(Kind kind, std::string_view text, uint64_t number) {
  switch (kind) {
    case Kind::String: return geth_balance(text);
    case Kind::Unsigned: return u256_from_u64(number);
    case Kind::Negative: return std::string("negative");
    case Kind::Float:
      // nlohmann reads integers above 2^64-1 as floats; go-ethereum reads the digits.
      if (all_digits(text)) return parse_u256_decimal(text);
      if (!text.empty() && text[0] == '-') return std::string("negative");
      return std::string("not an integer (a JSON float)");
    default: return std::string("must be a string or an integer, not ") + kind_name(kind);
  }
}

// An account's "nonce" value (not null): a go-ethereum nonce string or a JSON integer.
std::variant<uint64_t, std::string> nonce_value(Kind kind, std::string_view text, uint64_t number) {
  switch (kind) {
    case Kind::String: return geth_nonce(text);
    case Kind::Unsigned: return number;
    case Kind::Negative: return std::string("negative");
    case Kind::Float: return std::string("not an integer, or over 2^64-1");
    default: return std::string("must be an integer or a string, not ") + kind_name(kind);
  }
}

// A storage slot's value: a hex word, or null (go-ethereum leaves the value zero).
bool GenesisSax::slot_value(Kind kind, std::string_view text) {
  const Frame& f = frames_.back();
  const std::string who = "storage slot " + quote_for_error(f.key) + ": ";
  Hash32 value{};
  if (kind == Kind::String) {
    auto v = geth_storage_word(text);
    if (auto* e = std::get_if<std::string>(&v)) return account_error(who + "value " + *e);
    value = std::get<Hash32>(v);
  } else if (kind != Kind::Null) {
    return account_error(who + "value must be a hex string");
  }
  if (!f.slot_ok) return true;
  if (!account().storage.emplace(f.slot, value).second)
    return account_error("duplicate storage slot " + quote_for_error(f.key) + " (same slot spelled differently)");
  return true;
}

bool GenesisSax::scalar(Kind kind, std::string_view text, uint64_t number) {
  switch (next_target()) {
    case Target::Root:
      return fail(std::string("top level must be a JSON object, not ") + kind_name(kind));
    case Target::Alloc:
      return fail(std::string("\"alloc\" must be an object, not ") + kind_name(kind));
    case Target::Account: {
      if (kind != Kind::String)
        return account_error(std::string("must be a balance string or an object, not ") + kind_name(kind));
      // The short form "<address>": "<balance>" (not go-ethereum's): the strict spellings of u256.h.
      auto b = parse_u256(text);
      if (auto* e = std::get_if<std::string>(&b)) return account_error("balance: " + *e);
      account().balance = std::get<U256>(b);
      return true;
    }
    case Target::Balance: {
      auto b = balance_value(kind, text, number);
      if (auto* e = std::get_if<std::string>(&b)) return account_error("balance: " + *e);
      account().balance = std::get<U256>(b);
      return true;
    }
    case Target::Nonce: {
      if (kind == Kind::Null) return true;  // go-ethereum: as if absent
      auto n = nonce_value(kind, text, number);
      if (auto* e = std::get_if<std::string>(&n)) return account_error("nonce: " + *e);
      account().nonce = std::get<uint64_t>(n);
      return true;
    }
    case Target::Code: {
      if (kind == Kind::Null) return true;  // go-ethereum: as if absent
      if (kind != Kind::String) return account_error(std::string("code must be a 0x-hex string, not ") + kind_name(kind));
      auto c = geth_code(text);
      if (auto* e = std::get_if<std::string>(&c)) return account_error("code: " + *e);
      account().code = std::move(std::get<std::vector<uint8_t>>(c));
      return true;
    }
    case Target::Storage:
      if (kind == Kind::Null) return true;  // go-ethereum: as if absent
      return account_error(std::string("storage must be an object, not ") + kind_name(kind));
    case Target::SlotValue: return slot_value(kind, text);
    case Target::StateRoot: state_root_ = {true, kind, std::string(text), number}; return true;
    case Target::BlockHash: block_hash_ = {true, kind, std::string(text), number}; return true;
    case Target::Network: network_ = {true, kind, std::string(text), number}; return true;
    case Target::AccountCount: account_count_ = {true, kind, std::string(text), number}; return true;
    case Target::Ignore: return true;
  }
  return true;
}

std::variant<GenesisFile, std::string> GenesisSax::finish() {
  GenesisFile out;
  if (!alloc_seen_) {
    if (!deferred_error_.empty()) return source_ + ": " + deferred_error_;
    if (auto dup = duplicate_error(top_, top_.accounts.size(), "at the top level")) return source_ + ": " + *dup;
    out.alloc.accounts = std::move(top_.accounts);
    return out;
  }
  // Top-level keys read as accounts before "alloc" turned up: ignored, but the same key twice
  // is still a duplicate JSON key.
  if (auto dup = duplicate_error(top_, top_.accounts.size(), "at the top level");
      dup && dup->rfind("duplicate JSON key", 0) == 0)
    return source_ + ": " + *dup;
  if (auto dup = duplicate_error(alloc_, alloc_.accounts.size(), "in alloc")) return source_ + ": " + *dup;
  auto hash_field = [&](const MetaField& m, const char* name, std::optional<Hash32>* dest) -> std::optional<std::string> {
    if (!m.present) return std::nullopt;
    if (m.kind != Kind::String) return source_ + ": " + name + " must be a 0x-hex string of 32 bytes";
    auto r = parse_hash32(m.text);
    if (auto* e = std::get_if<std::string>(&r)) return source_ + ": " + name + " " + *e;
    *dest = std::get<Hash32>(r);
    return std::nullopt;
  };
  if (auto e = hash_field(state_root_, "expected_state_root", &out.expected_state_root)) return *e;
  if (auto e = hash_field(block_hash_, "expected_genesis_block_hash", &out.expected_genesis_block_hash)) return *e;
  if (network_.present) {
    if (network_.kind != Kind::String) return source_ + ": network must be a string";
    out.network = network_.text;
  }
  out.alloc.accounts = std::move(alloc_.accounts);
  if (account_count_.present) {
    if (account_count_.kind != Kind::Unsigned) return source_ + ": \"accounts\" must be a non-negative integer";
    if (account_count_.number != out.alloc.accounts.size())
      return source_ + ": \"accounts\" says " + std::to_string(account_count_.number) + " but alloc holds " +
             std::to_string(out.alloc.accounts.size());
  }
  return out;
}

}  // namespace

std::variant<GenesisFile, std::string> parse_genesis_json(std::string_view text, const std::string& source) {
  GenesisSax sax(source);
  bool ok = false;
  try {
    ok = json::sax_parse(text.data(), text.data() + text.size(), &sax);
  } catch (const json::exception& e) {
    return source + ": malformed JSON: " + one_line(e.what());
  }
  if (!ok) return sax.error().empty() ? source + ": malformed JSON" : sax.error();
  return sax.finish();
}

std::variant<GenesisFile, std::string> load_genesis_file(const std::string& path) {
  auto f = InputFile::open(path, "");
  if (auto* err = std::get_if<std::string>(&f)) return std::move(*err);
  return parse_genesis_json(std::get<InputFile>(f).text(), path);
}

std::variant<st::state::Allocation, std::string> load_genesis_alloc(const std::string& path) {
  auto r = load_genesis_file(path);
  if (auto* err = std::get_if<std::string>(&r)) return std::move(*err);
  return std::move(std::get<GenesisFile>(r).alloc);
}

}  // namespace st::workloads
