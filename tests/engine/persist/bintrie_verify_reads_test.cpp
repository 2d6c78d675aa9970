// bintrie_verify_reads_test: the binary trie's verify() reads each page of the tree about
// once even when its bounded page cache is dropped many times (DbOptions::verify_cache_pages
// set far below the database's pages), in the arena store; and it still verifies the same
// nodes, leaves and accounts as with a cache that holds the whole database.
// (Breadth-first by level with the cache dropped read each page once per level it holds
// records of: 1.7M reads for ~550k pages at 10M slots; here 2,511 and 1,824 reads for
// 575 and 585 pages, which the bound below rejects.)
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "engine/persist/tree_db.h"
#include "tests/engine/persist/bintrie_test_options.h"
#include "tests/io/io_test_util.h"
#include "workloads/synthetic_state.h"

namespace {

using namespace st;
using persist::DbOptions;
using st::io::test::TempDir;

persist::VerifyReport verify_with_cache(DbOptions o, size_t cache_pages) {
  o.verify_cache_pages = cache_pages;
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(persist::open_db(o, &db).message() == "");
  persist::VerifyReport rep;
  const io::Status st = db->verify(&rep);
  REQUIRE_MESSAGE(st.ok(), st.message());
  REQUIRE(rep.ok);
  return rep;
}

}  // namespace

TEST_CASE("persist bintrie: verify reads each page about once although its cache is dropped") {
  const state::SyntheticSpec spec = persist::test::many_pages_spec();
  const state::SyntheticState src(spec);
  for (unsigned gd : {3u, 5u}) {
    CAPTURE(gd);
    TempDir dir;
    const DbOptions o = persist::test::bintrie_options(dir.file("db"), gd);
    persist::BuildReport built;
    REQUIRE(persist::build_db(o, src, &built).message() == "");
    REQUIRE(built.pages > 200);  // many times the small cache below

    const persist::VerifyReport whole = verify_with_cache(o, 1u << 20);
    const persist::VerifyReport small = verify_with_cache(o, 16);
    MESSAGE("gd " << gd << ": " << built.pages << " tree pages; verify read " << whole.pages
                  << " (cache holds all), " << small.pages << " (cache of 16 pages)");
    CHECK(whole.pages == built.pages);
    // Re-reads only where a page holds records of subtrees checked chunks apart.
    CHECK(small.pages <= built.pages + built.pages / 10);
    CHECK(small.nodes == whole.nodes);
    CHECK(small.nodes == built.nodes);
    CHECK(small.slots == whole.slots);
    CHECK(whole.slots == src.slot_count());
    CHECK(whole.leaves >= whole.slots + 2 * spec.accounts);  // + the code chunks
    CHECK(small.accounts == spec.accounts);
    CHECK(whole.accounts == spec.accounts);
  }
}
