// refusal_checks: what the verified-fetch tests ask of a database with one changed node,
// for either tree: verify and a block commit (one that changes a given account's balance)
// refuse with exactly the expected one-line message and Errc::corrupt_page, and the commit
// publishes nothing; and the small synthetic state those tests build and change.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "engine/persist/bintrie/commit.h"
#include "engine/persist/db_files.h"
#include "engine/persist/mpt/commit.h"
#include "engine/persist/tree_db.h"
#include "engine/state/state_types.h"
#include "workloads/synthetic_state.h"

namespace st::persist::test {

// 400 accounts, 8 contracts of 60 slots, seed 5: small enough to build per test case, deep
// enough for every node kind the refusal tests change.
inline state::SyntheticSpec small_refusal_spec() {
  state::SyntheticSpec s;
  s.accounts = 400;
  s.contracts = 8;
  s.slots_per_contract = 60;
  s.seed = 5;
  return s;
}

inline void check_verify_and_commit_refuse(const DbOptions& o, const state::Address& account, const std::string& spec,
                                           const std::string& verify_message, const std::string& commit_message) {
  {
    std::unique_ptr<TreeDb> db;
    REQUIRE(open_db(o, &db).message() == "");
    VerifyReport vr;
    const io::Status vs = db->verify(&vr);
    CHECK(vs.code() == io::Errc::corrupt_page);
    CHECK_MESSAGE(vs.message() == verify_message, vs.message());
    CHECK_FALSE(vr.ok);
  }
  DbFiles files;
  REQUIRE(DbFiles::for_commit(o, &files).message() == "");
  const uint64_t seq = files.manifest.commit_seq;
  state::StateDiff d;
  state::AccountDiff a;
  a.address = account;
  a.balance = state::U256{};
  (*a.balance)[31] = 7;
  d.accounts.push_back(a);
  std::unique_ptr<CommitterBase> committer;
  if (files.manifest.params.tree_kind == io::TreeKind::bintrie) committer = std::make_unique<BintrieCommitter>(files);
  else committer = std::make_unique<MptCommitter>(files);
  CommitStats st;
  const io::Status cs = committer->commit(d, spec, &st);
  CHECK(cs.code() == io::Errc::corrupt_page);
  CHECK_MESSAGE(cs.message() == commit_message, cs.message());
  CHECK(cs.message().find('\n') == std::string::npos);
  committer.reset();
  DbFiles after;
  REQUIRE(DbFiles::for_read(o, &after).message() == "");
  CHECK(after.manifest.commit_seq == seq);
}

}  // namespace st::persist::test
