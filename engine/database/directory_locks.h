// directory_locks: the engine's door to a database directory's lock files for the CLI
// (workloads/ includes no io/ header; the locks themselves are io/db_lock.h):
//   is_lock_file  DIR/LOCK (the writer) and DIR/READERS (the readers' pins): what
//                 `build --force` keeps (a running writer holds LOCK), and alone they make
//                 no database
//   WriterLock    the one writer of DIR, held for the handle's life; acquire() refuses at
//                 once (Errc::locked, naming the holder) while another writer runs
// Invariant: nothing here adds behaviour to io/db_lock.h; it only names it for the CLI.
#pragma once

#include <string_view>

#include "io/db_lock.h"
#include "io/status.h"

namespace st::database {

using io::WriterLock;

inline bool is_lock_file(std::string_view name) { return name == io::kLockFileName || name == io::kReadersFileName; }

}  // namespace st::database
