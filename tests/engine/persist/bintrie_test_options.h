// bintrie_test_options: the DbOptions of the binary-trie database tests in this folder:
// sha256, buffered I/O (tests run on tmpfs-like /tmp), a small queue depth; and the state
// of the tests that need a database of many pages and many verify batches.
#pragma once

#include <string>

#include "engine/persist/tree_db.h"
#include "workloads/synthetic_state.h"

namespace st::persist::test {

inline DbOptions bintrie_options(const std::string& dir, unsigned gd, uint32_t page_size = 4096,
                                 StoreKind store = StoreKind::arena) {
  DbOptions o;
  o.dir = dir;
  o.store = store;
  o.params.tree_kind = io::TreeKind::bintrie;
  o.params.hash_kind = io::HashKind::sha256;
  o.params.group_depth = gd;
  o.params.page_size = page_size;
  o.direct_io = false;
  o.queue_depth = 16;
  return o;
}

// 3,000 accounts, 20 contracts of 400 slots, seed 5: hundreds of pages and more nodes than
// several of verify's hash batches.
inline state::SyntheticSpec many_pages_spec() {
  state::SyntheticSpec spec;
  spec.accounts = 3000;
  spec.contracts = 20;
  spec.slots_per_contract = 400;
  spec.seed = 5;
  return spec;
}

}  // namespace st::persist::test
