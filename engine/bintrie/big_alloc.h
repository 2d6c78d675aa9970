// big_alloc: allocation of the binary trie's big flat arrays (the mutable tree's node
// arrays, the from-scratch sort's temporaries). From 4 MiB on a block is 2 MiB aligned and
// advised to use transparent huge pages, so random walks over it do not pay a TLB miss and
// a page walk per node and its first touch faults a few 2 MiB pages instead of thousands of
// 4 KiB ones (measured: 4 KiB faults were ~6 ms of a 1M-key partition); smaller blocks are
// 64-byte aligned. The memory is uninitialized. Invariant: big_free gets the same byte
// count that big_alloc got (it selects the alignment).
#pragma once

#include <cstddef>

namespace st::bintrie {

void* big_alloc(size_t bytes);
void big_free(void* p, size_t bytes);

}  // namespace st::bintrie
