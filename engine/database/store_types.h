// store_types: the store's vocabulary under the engine's name, for the CLI: workloads/
// includes no io/ header and names no io:: type; it reaches the disk through the engine,
// and what it reads back from the engine (a status, a manifest, a tree or hash kind) it
// names here as database::. The names are the io/ types themselves (aliases, no copies),
// so nothing is converted on the way.
// Invariant: nothing here adds behaviour to io/; it only names it for the CLI.
#pragma once

#include "io/manifest.h"
#include "io/rocksdb_store.h"
#include "io/status.h"

namespace st::database {

using io::Errc;
using io::Status;

using io::HashKind;
using io::Manifest;
using io::StoreParams;
using io::TreeKind;
using io::check_params;
using io::hash_kind_name;
using io::tree_kind_name;

using io::RocksOptions;

}  // namespace st::database
