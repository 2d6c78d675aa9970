// keys: EIP-7864 key derivation, basic-data layout and code chunking (see keys.h).
#include "engine/bintrie/keys.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace st::bintrie {

Hash32 get_tree_key(const KeyScheme& ks, const Address& addr, const Hash32& tree_index_be, uint8_t sub_index) {
  uint8_t msg[64] = {};
  std::memcpy(msg + 12, addr.data(), 20);
  if (ks.endian == TreeIndexEndian::big) {
    std::memcpy(msg + 32, tree_index_be.data(), 32);
  } else {
    for (int i = 0; i < 32; ++i) msg[32 + i] = tree_index_be[31 - i];
  }
  Hash32 key;
  ks.hasher.hash(msg, 64, key.data());
  key[31] = sub_index;
  return key;
}

Hash32 basic_data_key(const KeyScheme& ks, const Address& addr) {
  return get_tree_key(ks, addr, Hash32{}, kBasicDataLeafKey);
}

Hash32 code_hash_key(const KeyScheme& ks, const Address& addr) {
  return get_tree_key(ks, addr, Hash32{}, kCodeHashLeafKey);
}

void storage_slot_position(const Hash32& slot_be, Hash32* tree_index_be, uint8_t* sub_index) {
  bool below_64 = slot_be[31] < 64;
  for (int i = 0; i < 31 && below_64; ++i) below_64 = slot_be[i] == 0;
  Hash32 ti{};
  if (below_64) {
    *sub_index = uint8_t(kHeaderStorageOffset + slot_be[31]);
  } else {
    // pos = 2^248 + s; tree_index = pos >> 8 = (s >> 8) + 2^240; sub = s & 0xff (2^248 has
    // no low bits, so no carry reaches the sub index). Fits: (s >> 8) + 2^240 < 2^249.
    std::memcpy(ti.data() + 1, slot_be.data(), 31);
    unsigned carry = 1;  // + 2^240 = +1 at byte 1
    for (int i = 1; i >= 0 && carry; --i) {
      const unsigned v = unsigned(ti[i]) + carry;
      ti[i] = uint8_t(v);
      carry = v >> 8;
    }
    *sub_index = slot_be[31];
  }
  *tree_index_be = ti;
}

Hash32 storage_slot_key(const KeyScheme& ks, const Address& addr, const Hash32& slot_be) {
  Hash32 ti;
  uint8_t sub;
  storage_slot_position(slot_be, &ti, &sub);
  return get_tree_key(ks, addr, ti, sub);
}

void code_chunk_position(uint64_t chunk_index, Hash32* tree_index_be, uint8_t* sub_index) {
  // pos = 128 + i can exceed 64 bits only for absurd i; chunk indices come from code sizes
  // (< 2^24 bytes), so the 64-bit sum is exact.
  const uint64_t pos = kCodeOffset + chunk_index;
  Hash32 ti{};
  const uint64_t idx = pos >> 8;
  for (int i = 0; i < 8; ++i) ti[31 - i] = uint8_t(idx >> (8 * i));
  *tree_index_be = ti;
  *sub_index = uint8_t(pos & 0xff);
}

Hash32 code_chunk_key(const KeyScheme& ks, const Address& addr, uint64_t chunk_index) {
  Hash32 ti;
  uint8_t sub;
  code_chunk_position(chunk_index, &ti, &sub);
  return get_tree_key(ks, addr, ti, sub);
}

Hash32 basic_data_leaf(uint64_t nonce, const Hash32& balance_be, uint32_t code_size) {
  assert(code_size < (1u << 24));
  Hash32 leaf{};
  leaf[5] = uint8_t(code_size >> 16);
  leaf[6] = uint8_t(code_size >> 8);
  leaf[7] = uint8_t(code_size);
  for (int i = 0; i < 8; ++i) leaf[8 + i] = uint8_t(nonce >> (56 - 8 * i));
  std::memcpy(leaf.data() + 16, balance_be.data() + 16, 16);
  return leaf;
}

BasicData parse_basic_data(const Hash32& leaf) {
  BasicData d;
  d.version = leaf[0];
  d.code_size = uint32_t(leaf[5]) << 16 | uint32_t(leaf[6]) << 8 | leaf[7];
  for (int i = 0; i < 8; ++i) d.nonce = d.nonce << 8 | leaf[8 + i];
  std::memcpy(d.balance_be.data() + 16, leaf.data() + 16, 16);
  return d;
}

std::vector<Hash32> chunkify_code(std::span<const uint8_t> code) {
  const size_t nchunks = (code.size() + kCodeChunkBytes - 1) / kCodeChunkBytes;
  std::vector<Hash32> chunks(nchunks, Hash32{});
  // push_data_end[j]: end offset of the PUSH data span covering chunk j's first byte, if any.
  size_t pc = 0;
  size_t chunk = 0;
  size_t data_end = 0;  // end (exclusive) of the push data span seen last
  while (chunk < nchunks) {
    const size_t start = chunk * kCodeChunkBytes;
    // Advance the opcode scan until it passes the chunk start.
    while (pc < start && pc < code.size()) {
      const uint8_t op = code[pc];
      if (op >= 0x60 && op <= 0x7f) {
        data_end = pc + 1 + (op - 0x5f);
        pc = data_end;
      } else {
        pc += 1;
      }
    }
    const size_t pending = data_end > start ? std::min<size_t>(data_end - start, kCodeChunkBytes) : 0;
    Hash32& c = chunks[chunk];
    c[0] = uint8_t(pending);
    const size_t n = std::min(kCodeChunkBytes, code.size() - start);
    std::memcpy(c.data() + 1, code.data() + start, n);
    ++chunk;
  }
  return chunks;
}

}  // namespace st::bintrie
