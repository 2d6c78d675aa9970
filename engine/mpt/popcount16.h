// popcount16: the number of set bits of a 16-bit mask (a branch's kid_mask, dirty_mask), in
// plain integer operations. std::popcount compiles to a libgcc call (__popcountdi2, a table
// walk) unless the target has POPCNT, and the engine is built for baseline x86-64 (ISA
// flags only on kernel files), so the trie's hot paths count bits this way instead.
#pragma once

#include <cstdint>

namespace st::mpt {

constexpr unsigned popcount16(uint32_t x) {
  x &= 0xffffu;
  x = x - ((x >> 1) & 0x5555u);
  x = (x & 0x3333u) + ((x >> 2) & 0x3333u);
  x = (x + (x >> 4)) & 0x0f0fu;
  return (x + (x >> 8)) & 0x1fu;
}

static_assert(popcount16(0) == 0 && popcount16(1) == 1 && popcount16(0x8000) == 1 && popcount16(0xffff) == 16 &&
              popcount16(0xa5a5) == 8 && popcount16(0x1ffff) == 16);

}  // namespace st::mpt
