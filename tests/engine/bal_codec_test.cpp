// bal_codec_test: the EIP-7928 block access list codec (engine/state/bal.h). Round trips
// of models and block files; every strictness rule with a mutated input, built with a tiny
// canonical RLP writer here (independent of the codec), so each input differs from a valid
// one in exactly the rule under test; the error names the block, the account and the byte
// offset.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/state/bal.h"
#include "engine/state/bal_derive.h"

using namespace st::state;

namespace {

using B = std::vector<uint8_t>;

B hdr(size_t n, uint8_t short_base, uint8_t long_base) {
  if (n < 56) return {uint8_t(short_base + n)};
  B len;
  for (size_t v = n; v; v >>= 8) len.insert(len.begin(), uint8_t(v));
  B h{uint8_t(long_base + len.size())};
  h.insert(h.end(), len.begin(), len.end());
  return h;
}
B str(const B& p) {
  if (p.size() == 1 && p[0] < 0x80) return p;
  B out = hdr(p.size(), 0x80, 0xb7);
  out.insert(out.end(), p.begin(), p.end());
  return out;
}
B lst(std::initializer_list<B> items) {
  B payload;
  for (const B& i : items) payload.insert(payload.end(), i.begin(), i.end());
  B out = hdr(payload.size(), 0xc0, 0xf7);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}
B u(uint64_t v) {
  B be;
  for (; v; v >>= 8) be.insert(be.begin(), uint8_t(v));
  return str(be);
}
B addr(uint8_t last, size_t len = 20) {
  B a(len, 0x11);
  a.back() = last;
  return str(a);
}
const B E = lst({});  // the empty list
B account(const B& address, const B& sc = lst({}), const B& sr = lst({}), const B& bc = lst({}), const B& nc = lst({}),
          const B& cc = lst({})) {
  return lst({address, sc, sr, bc, nc, cc});
}

std::string decode_err(const B& b, std::optional<uint32_t> tx_count = std::nullopt) {
  BlockAccessList bal;
  std::string err;
  if (decode_bal(b, tx_count, &bal, &err)) return "";
  return err;
}

// The valid base: two accounts with every field.
B valid_bal() {
  return lst({account(addr(1), lst({lst({u(1), lst({lst({u(1), u(5)}), lst({u(2), u(0)})})}), lst({u(9), lst({lst({u(1), u(7)})})})}),
                      lst({u(2), u(3)}), lst({lst({u(1), u(100)})}), lst({lst({u(1), u(1)})}),
                      lst({lst({u(2), str({0x60, 0x00})})})),
              account(addr(2))});
}

AccountChanges acc(uint8_t last) {
  AccountChanges a;
  a.address.fill(0x11);
  a.address[19] = last;
  return a;
}
Hash32 w(uint64_t v) {
  Hash32 b{};
  for (int i = 31; i >= 24; --i, v >>= 8) b[i] = uint8_t(v);
  return b;
}

}  // namespace

TEST_CASE("bal codec: the valid base decodes, round-trips byte-identically and matches its model") {
  const B base = valid_bal();
  BlockAccessList bal;
  std::string err;
  REQUIRE_MESSAGE(decode_bal(base, std::nullopt, &bal, &err), err);
  CHECK(encode_bal(bal) == base);
  REQUIRE(bal.accounts.size() == 2);
  const AccountChanges& a = bal.accounts[0];
  CHECK(a.storage_changes.size() == 2);
  CHECK(a.storage_changes[0].slot == w(1));
  CHECK(a.storage_changes[0].changes == std::vector<StorageChange>{{1, w(5)}, {2, w(0)}});
  CHECK(a.storage_reads == std::vector<Hash32>{w(2), w(3)});
  CHECK(a.balance_changes == std::vector<BalanceChange>{{1, w(100)}});
  CHECK(a.nonce_changes == std::vector<NonceChange>{{1, 1}});
  CHECK(a.code_changes == std::vector<CodeChange>{{2, {0x60, 0x00}}});
  CHECK(bal_check(bal, 2) == "");
  CHECK(decode_err(base, 1) == "");  // indices up to n + 1 = 2
}

TEST_CASE("bal codec: the empty list hashes to the EIP's empty BAL hash") {
  const Hash32 h = bal_hash(BlockAccessList{});
  const Hash32 want = {0x1d, 0xcc, 0x4d, 0xe8, 0xde, 0xc7, 0x5d, 0x7a, 0xab, 0x85, 0xb5, 0x67, 0xb6, 0xcc, 0xd4, 0x1a,
                        0xd3, 0x12, 0x45, 0x1b, 0x94, 0x8a, 0x74, 0x13, 0xf0, 0xa1, 0x42, 0xfd, 0x40, 0xd4, 0x93, 0x47};
  CHECK(h == want);
  CHECK(encode_bal(BlockAccessList{}) == B{0xc0});
}

TEST_CASE("bal codec: every strictness rule rejects a mutated input with block, account and offset") {
  const std::string acc1 = "account 0x1111111111111111111111111111111111111101";
  struct Case {
    const char* what;
    B input;
    std::optional<uint32_t> tx_count;
    const char* expect;  // a substring of the error
  };
  const B big_slot = str(B(33, 0x01));
  const B base = valid_bal();
  const B truncated(base.begin(), base.end() - 1);
  const std::vector<Case> cases = {
      {"non-canonical single byte (0x81 0x01 for an index)",
       lst({account(addr(1), lst({}), lst({}), lst({lst({B{0x81, 0x01}, u(5)})}))}), {}, "non-canonical"},
      {"long-form length for a short list",
       lst({B{0xf8, 0x05, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0}}), {}, "non-canonical"},
      {"integer with a leading zero byte (slot)", lst({account(addr(1), lst({}), lst({str({0x00, 0x01})}))}), {}, "leading zero"},
      {"zero spelled 0x00 (storage value)",
       lst({account(addr(1), lst({lst({u(1), lst({lst({u(1), B{0x00}})})})}))}), {}, "leading zero"},
      {"accounts out of order", lst({account(addr(2)), account(addr(1))}), {}, "strictly increasing by address"},
      {"duplicate account", lst({account(addr(1)), account(addr(1))}), {}, "strictly increasing by address"},
      {"written slots out of order",
       lst({account(addr(1), lst({lst({u(2), lst({lst({u(1), u(1)})})}), lst({u(1), lst({lst({u(1), u(1)})})})}))}), {},
       "slots must be strictly increasing"},
      {"duplicate written slot",
       lst({account(addr(1), lst({lst({u(1), lst({lst({u(1), u(1)})})}), lst({u(1), lst({lst({u(1), u(1)})})})}))}), {},
       "slots must be strictly increasing"},
      {"read slots out of order", lst({account(addr(1), lst({}), lst({u(3), u(2)}))}), {}, "reads must be strictly increasing"},
      {"duplicate read slot", lst({account(addr(1), lst({}), lst({u(2), u(2)}))}), {}, "reads must be strictly increasing"},
      {"slot both written and read",
       lst({account(addr(1), lst({lst({u(2), lst({lst({u(1), u(1)})})})}), lst({u(1), u(2)}))}), {}, "both written and read"},
      {"empty change list of a written slot", lst({account(addr(1), lst({lst({u(1), lst({})})}))}), {}, "empty change list"},
      {"storage change indices out of order",
       lst({account(addr(1), lst({lst({u(1), lst({lst({u(2), u(1)}), lst({u(1), u(1)})})})}))}), {}, "strictly increasing"},
      {"duplicate balance change index", lst({account(addr(1), E, E, lst({lst({u(1), u(1)}), lst({u(1), u(2)})}))}), {},
       "not after 1"},
      {"nonce change indices out of order", lst({account(addr(1), E, E, E, lst({lst({u(3), u(1)}), lst({u(2), u(2)})}))}), {},
       "not after 3"},
      {"code change indices out of order", lst({account(addr(1), E, E, E, E, lst({lst({u(3), u(1)}), lst({u(2), u(2)})}))}),
       {}, "not after 3"},
      {"index past n + 1", lst({account(addr(1), E, E, lst({lst({u(3), u(1)})}))}), 1u, "past tx_count + 1 = 2"},
      {"21-byte address", lst({account(addr(1, 21))}), {}, "address of 21 bytes"},
      {"19-byte address", lst({account(addr(1, 19))}), {}, "address of 19 bytes"},
      {"33-byte slot", lst({account(addr(1), E, lst({big_slot}))}), {}, "integer of 33 bytes"},
      {"5-byte index", lst({account(addr(1), E, E, lst({lst({u(1ull << 32), u(1)})}))}), {}, "integer of 5 bytes"},
      {"9-byte nonce", lst({account(addr(1), E, E, E, lst({lst({u(1), str(B(9, 1))})}))}), {}, "integer of 9 bytes"},
      {"account with 5 fields", lst({lst({addr(1), E, E, E, E})}), {}, "expected 6 items"},
      {"storage change with 3 fields", lst({account(addr(1), lst({lst({u(1), lst({lst({u(1), u(1), u(1)})})})}))}), {},
       "expected 2 items"},
      {"a list where the slot goes", lst({account(addr(1), E, lst({E}))}), {}, "expected an integer"},
      {"a string where storage_reads goes", lst({account(addr(1), E, u(1))}), {}, "expected a list"},
      {"truncated", truncated, {}, "truncated"},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.what));
    const std::string err = decode_err(c.input, c.tx_count);
    CAPTURE(err);
    CHECK(err.find(c.expect) != std::string::npos);
    CHECK(err.rfind("block 0: ", 0) == 0);
    CHECK(err.find("byte offset ") != std::string::npos);
    CHECK(err.find('\n') == std::string::npos);
  }
  // Errors inside an account name it; the offset points at the offending item.
  {
    const B in = lst({account(addr(1)), account(addr(1))});
    const std::string err = decode_err(in);
    CHECK(err.find(acc1) != std::string::npos);
    const size_t second = 1 + account(addr(1)).size();  // outer header + first account
    CHECK(err.find("byte offset " + std::to_string(second + 1) + ":") != std::string::npos);  // its address
  }
  // Trailing bytes: the offset is where the extra bytes start.
  {
    B in = valid_bal();
    const size_t n = in.size();
    in.push_back(0x00);
    const std::string err = decode_err(in);
    CHECK(err == "block 0: byte offset " + std::to_string(n) + ": trailing bytes after the block access list");
  }
}

TEST_CASE("bal codec: bal_check finds a non-canonical model (the generators' guard)") {
  BlockAccessList bal;
  bal.accounts = {acc(2), acc(1)};
  CHECK(bal_check(bal, std::nullopt).find("strictly increasing by address") != std::string::npos);
  bal.accounts = {acc(1)};
  bal.accounts[0].storage_changes.push_back({w(1), {}});
  CHECK(bal_check(bal, std::nullopt).find("empty change list") != std::string::npos);
}

TEST_CASE("bal block files: blocks round-trip; a bare BAL is a one-block file; errors name the block") {
  Block b1;
  b1.header.number = 7;
  b1.header.tree = BalTree::mpt;
  b1.header.pre_state_root = w(42);
  b1.header.tx_count = 2;
  b1.header.txs = {{21000, 0}, {30000, 3}};
  b1.bal.accounts = {acc(1), acc(3)};
  b1.bal.accounts[0].storage_changes.push_back({w(9), {{1, w(1)}, {2, w(0)}}});
  b1.bal.accounts[1].nonce_changes.push_back({3, 4});
  Block b2;
  b2.header.number = 8;
  b2.header.tree = BalTree::mpt;
  b2.header.tx_count = 0;
  const std::vector<Block> blocks = {b1, b2};
  const B file = encode_blocks(blocks);
  std::vector<Block> back;
  std::string err;
  REQUIRE_MESSAGE(decode_blocks(file, &back, &err), err);
  CHECK(back == blocks);
  CHECK(encode_blocks(back) == file);

  // A bare BAL (and the empty BAL) as a file: one block, header unknown.
  REQUIRE(decode_blocks(valid_bal(), &back, &err));
  REQUIRE(back.size() == 1);
  CHECK(!back[0].header.tx_count);
  CHECK(!back[0].header.pre_state_root);
  CHECK(encode_bal(back[0].bal) == valid_bal());
  REQUIRE(decode_blocks(B{0xc0}, &back, &err));
  CHECK(back.size() == 1);
  CHECK(back[0].bal.accounts.empty());

  // An unknown tx_count is the empty list, and survives the round trip.
  Block b3 = b2;
  b3.header.tx_count.reset();
  REQUIRE(decode_blocks(encode_block(b3), &back, &err));
  CHECK(!back[0].header.tx_count);

  // The second block's index past its tx_count + 1: the error names block 8.
  Block bad = b2;
  bad.bal.accounts = {acc(1)};
  bad.bal.accounts[0].balance_changes.push_back({2, w(1)});
  const std::vector<Block> two = {b1, bad};
  const B badfile = encode_blocks(two);
  CHECK(!decode_blocks(badfile, &back, &err));
  CHECK(err.rfind("block 8: account 0x1111111111111111111111111111111111111101: byte offset ", 0) == 0);
  CHECK(err.find("past tx_count + 1 = 1") != std::string::npos);

  // Trailing garbage after the blocks, and a wrong transaction entry count.
  B trailing = file;
  trailing.push_back(0x01);
  CHECK(!decode_blocks(trailing, &back, &err));
  CHECK(err.find("block 2: byte offset " + std::to_string(file.size())) == 0);
  Block mism = b1;
  mism.header.txs.pop_back();
  CHECK(!decode_blocks(encode_block(mism), &back, &err));
  CHECK(err.find("1 transaction entries for tx_count 2") != std::string::npos);
  CHECK(!decode_blocks(B{}, &back, &err));

  // An unknown tree name is quoted printable: a newline (or any control byte) in it cannot
  // split the one-line error (found by bal_fuzz).
  const B odd_tree = lst({lst({u(1), str(B{'b', '\n', 'x', 0x00}), str(B{}), lst({}), lst({})}), lst({})});
  CHECK(!decode_blocks(odd_tree, &back, &err));
  CHECK(err.find('\n') == std::string::npos);
  CHECK(err.find("unknown tree \"b\\x0ax\\x00\"") != std::string::npos);
}

TEST_CASE("bal derive: the post-state diff takes the last change; accesses by index") {
  BlockAccessList bal;
  bal.accounts = {acc(1), acc(2), acc(3)};
  bal.accounts[0].storage_changes.push_back({w(1), {{1, w(5)}, {2, w(0)}}});
  bal.accounts[0].storage_changes.push_back({w(4), {{2, w(6)}}});
  bal.accounts[0].storage_reads = {w(2), w(3)};
  bal.accounts[1].balance_changes = {{1, w(10)}, {2, w(11)}};
  bal.accounts[1].nonce_changes = {{2, 9}};
  bal.accounts[1].code_changes = {{1, {0x01}}, {3, {0x02, 0x03}}};
  REQUIRE(bal_check(bal, 2) == "");
  const StateDiff d = post_state_diff(bal);
  REQUIRE(d.accounts.size() == 2);  // acc(3) only touched
  CHECK(d.accounts[0].address == acc(1).address);
  CHECK(d.accounts[0].storage_writes == std::vector<std::pair<Hash32, Hash32>>{{w(1), w(0)}, {w(4), w(6)}});
  CHECK(!d.accounts[0].balance);
  CHECK(*d.accounts[1].balance == w(11));
  CHECK(*d.accounts[1].nonce == 9);
  CHECK(*d.accounts[1].code == std::vector<uint8_t>{0x02, 0x03});

  const auto by = access_by_index(bal, 2, ReadAssignment{});
  REQUIRE(by.size() == 4);
  CHECK(by[1].slots_written == std::vector<SlotRef>{{acc(1).address, w(1)}});
  CHECK(by[2].slots_written == std::vector<SlotRef>{{acc(1).address, w(1)}, {acc(1).address, w(4)}});
  CHECK(by[1].accounts_written == std::vector<Address>{acc(1).address, acc(2).address});
  CHECK(by[3].accounts_written == std::vector<Address>{acc(2).address});
  // Three read-only accesses (two slots, one change-less account) in equal shares, BAL order.
  CHECK(by[1].slots_read.size() == 1 + 1);  // its written slot + one read
  CHECK(by[2].slots_read.size() == 2 + 1);
  CHECK(by[2].accounts_read == std::vector<Address>{acc(3).address});
  ReadAssignment weighted;
  weighted.weights = {0, 1};
  const auto wb = access_by_index(bal, 2, weighted);
  CHECK(wb[1].slots_read.size() == 1);
  CHECK(wb[2].slots_read.size() == 4);

  const BalSummary s = summarize_bal(bal);
  CHECK(s.accounts == 3);
  CHECK(s.accounts_changed == 2);
  CHECK(s.slots_written == 2);
  CHECK(s.slots_read == 2);
  CHECK(s.storage_changes == 3);
  CHECK(s.slots_zeroed == 1);
  CHECK(s.max_index == 3);
}
