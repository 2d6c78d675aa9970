// account: account / storage leaf values (see account.h).
#include "engine/mpt/account.h"

#include <cstring>

#include "kernels/rlp.h"

namespace st::mpt {

using namespace st::kernels;

namespace {
size_t payload_size(const AccountFields& a) {
  return rlp_uint_size(a.nonce) + rlp_uint_be_size(a.balance.data(), 32) + 33 + 33;
}
}  // namespace

size_t account_rlp_size(const AccountFields& a) { return rlp_list_size(payload_size(a)); }

uint8_t* put_account_rlp(uint8_t* out, const AccountFields& a) {
  out = rlp_put_list_header(out, payload_size(a));
  out = rlp_put_uint(out, a.nonce);
  out = rlp_put_uint_be(out, a.balance.data(), 32);
  out = rlp_put_string(out, a.storage_root.data(), 32);
  return rlp_put_string(out, a.code_hash.data(), 32);
}

std::vector<uint8_t> account_rlp(const AccountFields& a) {
  std::vector<uint8_t> v(account_rlp_size(a));
  put_account_rlp(v.data(), a);
  return v;
}

std::string decode_account_rlp(std::span<const uint8_t> enc, AccountFields* out) {
  RlpItem top, it[4];
  size_t n = 0;
  RlpError e = rlp_decode_exact(enc.data(), enc.size(), &top);
  if (e == RlpError::ok) e = rlp_list_items(top, it, 4, &n);
  if (e != RlpError::ok) return std::string("account rlp: ") + rlp_error_name(e);
  if (n != 4) return "account rlp: expected 4 items";
  for (size_t i = 0; i < 4; ++i)
    if (it[i].is_list) return "account rlp: nested list";
  if (it[0].payload_len > 8 || it[1].payload_len > 32) return "account rlp: integer too long";
  if ((it[0].payload_len && it[0].payload[0] == 0) || (it[1].payload_len && it[1].payload[0] == 0))
    return "account rlp: integer with a leading zero";
  if (it[2].payload_len != 32 || it[3].payload_len != 32) return "account rlp: hash is not 32 bytes";
  AccountFields a;
  for (size_t i = 0; i < it[0].payload_len; ++i) a.nonce = (a.nonce << 8) | it[0].payload[i];
  std::memcpy(a.balance.data() + 32 - it[1].payload_len, it[1].payload, it[1].payload_len);
  std::memcpy(a.storage_root.data(), it[2].payload, 32);
  std::memcpy(a.code_hash.data(), it[3].payload, 32);
  *out = a;
  return "";
}

bool is_zero(const st::state::Hash32& v) {
  for (uint8_t b : v)
    if (b) return false;
  return true;
}

size_t put_storage_value_rlp(uint8_t* out, const st::state::Hash32& v) {
  if (is_zero(v)) return 0;
  return size_t(rlp_put_uint_be(out, v.data(), 32) - out);
}

std::vector<uint8_t> storage_value_rlp(const st::state::Hash32& v) {
  if (is_zero(v)) return {};
  std::vector<uint8_t> out(rlp_uint_be_size(v.data(), 32));
  rlp_put_uint_be(out.data(), v.data(), 32);
  return out;
}

}  // namespace st::mpt
