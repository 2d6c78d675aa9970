// genesis: see genesis.h. Two passes: nlohmann parses the text into a DOM while a parser
// callback rejects duplicate keys (per object, with the key path in the message) and records
// the file order of the top-level and alloc keys; then each account is converted with strict
// field checks. Errors are returned as one line: "<source>: account <addr>: <what>".
#include "workloads/genesis.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/u256.h"

namespace st::workloads {

namespace {

using json = nlohmann::json;
using st::state::Account;
using st::state::Address;
using st::state::Bytes32;

struct Frame {
  bool is_object = false;
  std::unordered_set<std::string> keys;
  std::string current_key;
};

// State the parser callback fills in: duplicate-key error and the key order we need.
struct ParseTrace {
  std::vector<Frame> stack;
  std::vector<std::string> top_keys;    // keys of the top-level object, in file order
  std::vector<std::string> alloc_keys;  // keys of top-level "alloc", in file order
  std::string duplicate_error;          // first duplicate key found, if any
};

std::string key_path(const std::vector<Frame>& stack) {
  std::string p;
  for (const Frame& f : stack) {
    if (!f.is_object) { p += "[]"; continue; }
    if (f.current_key.empty() && &f == &stack.back()) break;
    if (!p.empty()) p += '.';
    p += f.current_key;
  }
  return p;
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::variant<Address, std::string> parse_address(std::string_view text) {
  std::string_view digits = text;
  if (digits.size() >= 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) digits.remove_prefix(2);
  if (digits.size() != 40) return "address is not 20 bytes (40 hex digits)";
  auto bytes = parse_hex_bytes(digits, true);
  if (auto* err = std::get_if<std::string>(&bytes)) return "bad address: " + *err;
  Address a{};
  std::memcpy(a.data(), std::get<std::vector<uint8_t>>(bytes).data(), 20);
  return a;
}

// Storage slot or value: "0x" optional, 1..64 hex digits, left-padded to 32 bytes.
std::variant<Bytes32, std::string> parse_word(std::string_view text) {
  std::string_view t = text;
  if (!(t.size() >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X'))) {
    std::string with_prefix = "0x" + std::string(t);
    auto r = parse_u256_hex(with_prefix);
    if (auto* err = std::get_if<std::string>(&r)) return *err;
    if (t.size() > 64) return "more than 32 bytes: " + quote_for_error(text);
    return std::get<U256>(r);
  }
  if (t.size() - 2 > 64) return "more than 32 bytes: " + quote_for_error(text);
  return parse_u256_hex(t);
}

std::variant<Bytes32, std::string> parse_hash32(const json& v) {
  if (!v.is_string()) return std::string("must be a 0x-hex string of 32 bytes");
  const std::string& s = v.get_ref<const std::string&>();
  auto bytes = parse_hex_bytes(s, false);
  if (auto* err = std::get_if<std::string>(&bytes)) return *err;
  const auto& b = std::get<std::vector<uint8_t>>(bytes);
  if (b.size() != 32) return "must be 32 bytes: " + quote_for_error(s);
  Bytes32 out{};
  std::memcpy(out.data(), b.data(), 32);
  return out;
}

// A balance: decimal or 0x-hex string, or a JSON unsigned integer.
std::variant<U256, std::string> parse_balance(const json& v) {
  if (v.is_string()) return parse_u256(v.get_ref<const std::string&>());
  if (v.is_number_unsigned()) return u256_from_u64(v.get<uint64_t>());
  if (v.is_number_integer()) return std::string("negative");
  if (v.is_number_float())
    return std::string("a JSON float (integers above 2^64-1 must be strings)");
  return "must be a string or an integer, not " + std::string(v.type_name());
}

std::variant<uint64_t, std::string> parse_nonce(const json& v) {
  if (v.is_string()) return parse_u64(v.get_ref<const std::string&>());
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) return std::string("negative");
  if (v.is_number_float()) return std::string("not an integer, or over 2^64-1");
  return "must be an integer or a string, not " + std::string(v.type_name());
}

std::optional<std::string> parse_account(const json& v, Account& acc) {
  if (v.is_string()) {
    auto b = parse_u256(v.get_ref<const std::string&>());
    if (auto* err = std::get_if<std::string>(&b)) return "balance: " + *err;
    acc.balance = std::get<U256>(b);
    return std::nullopt;
  }
  if (!v.is_object())
    return "must be a balance string or an object, not " + std::string(v.type_name());
  bool have_balance = false;
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string& field = it.key();
    const json& fv = it.value();
    if (field == "balance") {
      auto b = parse_balance(fv);
      if (auto* err = std::get_if<std::string>(&b)) return "balance: " + *err;
      acc.balance = std::get<U256>(b);
      have_balance = true;
    } else if (field == "nonce") {
      auto n = parse_nonce(fv);
      if (auto* err = std::get_if<std::string>(&n)) return "nonce: " + *err;
      acc.nonce = std::get<uint64_t>(n);
    } else if (field == "code") {
      if (!fv.is_string()) return "code must be a 0x-hex string, not " + std::string(fv.type_name());
      auto c = parse_hex_bytes(fv.get_ref<const std::string&>(), false);
      if (auto* err = std::get_if<std::string>(&c)) return "code: " + *err;
      acc.code = std::move(std::get<std::vector<uint8_t>>(c));
    } else if (field == "storage") {
      if (!fv.is_object()) return "storage must be an object, not " + std::string(fv.type_name());
      for (auto s = fv.begin(); s != fv.end(); ++s) {
        auto slot = parse_word(s.key());
        if (auto* err = std::get_if<std::string>(&slot)) return "storage slot " + quote_for_error(s.key()) + ": " + *err;
        if (!s.value().is_string())
          return "storage slot " + quote_for_error(s.key()) + ": value must be a hex string";
        auto value = parse_word(s.value().get_ref<const std::string&>());
        if (auto* err = std::get_if<std::string>(&value)) return "storage slot " + quote_for_error(s.key()) + ": value " + *err;
        auto [pos, inserted] = acc.storage.emplace(std::get<Bytes32>(slot), std::get<Bytes32>(value));
        if (!inserted) return "duplicate storage slot " + quote_for_error(s.key()) + " (same slot spelled differently)";
      }
    } else {
      return "unknown field " + quote_for_error(field) + " (expected balance, nonce, code, storage)";
    }
  }
  if (!have_balance) return std::string("missing balance");
  return std::nullopt;
}

}  // namespace

std::variant<GenesisFile, std::string> parse_genesis_json(std::string_view text, const std::string& source) {
  ParseTrace trace;
  json::parser_callback_t cb = [&trace](int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: trace.stack.push_back(Frame{true, {}, {}}); break;
      case json::parse_event_t::array_start: trace.stack.push_back(Frame{false, {}, {}}); break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!trace.stack.empty()) trace.stack.pop_back();
        break;
      case json::parse_event_t::key: {
        if (trace.stack.empty() || !parsed.is_string()) break;
        Frame& f = trace.stack.back();
        const std::string& k = parsed.get_ref<const std::string&>();
        if (!f.keys.insert(k).second && trace.duplicate_error.empty()) {
          f.current_key.clear();
          const std::string where = key_path(trace.stack);
          trace.duplicate_error = "duplicate JSON key " + quote_for_error(k) +
                                  (where.empty() ? " at the top level" : " in " + where);
        }
        f.current_key = k;
        if (trace.stack.size() == 1) trace.top_keys.push_back(k);
        else if (trace.stack.size() == 2 && trace.stack[0].current_key == "alloc" && trace.stack[1].is_object)
          trace.alloc_keys.push_back(k);
        break;
      }
      case json::parse_event_t::value: break;
    }
    return true;
  };

  json doc;
  try {
    doc = json::parse(text.begin(), text.end(), cb);
  } catch (const json::exception& e) {
    return source + ": malformed JSON: " + one_line(e.what());
  }
  if (!trace.duplicate_error.empty()) return source + ": " + trace.duplicate_error;
  if (!doc.is_object()) return source + ": top level must be a JSON object, not " + std::string(doc.type_name());

  GenesisFile out;
  const json* alloc = &doc;
  const std::vector<std::string>* order = &trace.top_keys;
  if (doc.contains("alloc")) {
    alloc = &doc["alloc"];
    order = &trace.alloc_keys;
    if (!alloc->is_object()) return source + ": \"alloc\" must be an object, not " + std::string(alloc->type_name());
    if (auto it = doc.find("expected_state_root"); it != doc.end()) {
      auto r = parse_hash32(*it);
      if (auto* err = std::get_if<std::string>(&r)) return source + ": expected_state_root " + *err;
      out.expected_state_root = std::get<Bytes32>(r);
    }
    if (auto it = doc.find("expected_genesis_block_hash"); it != doc.end()) {
      auto r = parse_hash32(*it);
      if (auto* err = std::get_if<std::string>(&r)) return source + ": expected_genesis_block_hash " + *err;
      out.expected_genesis_block_hash = std::get<Bytes32>(r);
    }
    if (auto it = doc.find("network"); it != doc.end()) {
      if (!it->is_string()) return source + ": network must be a string";
      out.network = it->get<std::string>();
    }
  }
  // The callback saw every key of the alloc object exactly once (duplicates were rejected).
  if (order->size() != alloc->size()) return source + ": internal error: key order lost";  // cannot happen

  std::set<Address> seen;
  out.alloc.accounts.reserve(alloc->size());
  for (const std::string& key : *order) {
    const std::string who = source + ": account " + quote_for_error(key) + ": ";
    auto addr = parse_address(key);
    if (auto* err = std::get_if<std::string>(&addr)) return who + *err;
    if (!seen.insert(std::get<Address>(addr)).second)
      return who + "duplicate address (the same 20 bytes appear earlier, spelled differently)";
    Account acc;
    if (auto err = parse_account(alloc->at(key), acc)) return who + *err;
    out.alloc.accounts.emplace_back(std::get<Address>(addr), std::move(acc));
  }

  if (alloc != &doc) {
    if (auto it = doc.find("accounts"); it != doc.end()) {
      if (!it->is_number_unsigned()) return source + ": \"accounts\" must be a non-negative integer";
      if (it->get<uint64_t>() != out.alloc.accounts.size())
        return source + ": \"accounts\" says " + std::to_string(it->get<uint64_t>()) + " but alloc holds " +
               std::to_string(out.alloc.accounts.size());
    }
  }
  return out;
}

std::variant<GenesisFile, std::string> load_genesis_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open " + path + ": " + std::strerror(errno);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return "cannot read " + path + ": " + std::strerror(errno);
  return parse_genesis_json(ss.str(), path);
}

std::variant<st::state::Allocation, std::string> load_genesis_alloc(const std::string& path) {
  auto r = load_genesis_file(path);
  if (auto* err = std::get_if<std::string>(&r)) return std::move(*err);
  return std::move(std::get<GenesisFile>(r).alloc);
}

}  // namespace st::workloads
