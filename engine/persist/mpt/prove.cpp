// mpt/prove.cpp: MptTreeDb::prove, an account proof (and the slot's storage proof): the
// key's lookup walk with each hashed node's body on its path collected, root first (every
// node checked against its parent's hash as a lookup's).
#include "engine/persist/mpt/tree_db.h"

namespace st::persist::mpt_read {

io::Status MptTreeDb::prove(const state::StateKey& key, StateProof* out) {
  mpt::AccountProof p;
  p.address = key.address;
  std::vector<Cursor> cs(1);
  std::vector<LookupAnswer> ans(1);
  hash_keys({&key, 1}, cs, ans);
  mpt::StorageProof sp;
  cs[0].account_proof = &p.account_proof;
  cs[0].storage_proof = &sp.proof;
  LookupStats st;
  io::Status s = walk(cs, false, &st);
  if (!s.ok()) return s;
  const AccountInfo& a = ans[0].account;
  p.exists = a.exists;
  if (a.exists) {
    p.nonce = a.nonce;
    p.balance = a.balance;
    p.storage_root = a.storage_root;
    p.code_hash = a.code_hash;
  }
  if (key.slot) {
    sp.slot = *key.slot;
    if (ans[0].slot_value) sp.value = *ans[0].slot_value;
    p.storage_proofs.push_back(std::move(sp));
  }
  *out = std::move(p);
  return {};
}

}  // namespace st::persist::mpt_read
