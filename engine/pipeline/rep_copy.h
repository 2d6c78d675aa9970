// rep_copy: the fresh database copies `statetree run --reps` runs its repetitions on, so
// each repetition starts from the same state and the original is never written.
//
//   prepare_scratch(DIR, DB) DIR absent (created) or an empty directory, not inside the
//                           database DB; anything else is refused (bad_argument), so no file
//                           of the caller's is overwritten
//   copy_database(FROM, TO) TO (absent) becomes a copy of the database FROM: every file and
//                           directory of FROM but its own lock files (LOCK, READERS: the copy
//                           makes its own), taken while FROM's writer lock is held, so no
//                           commit lands during the copy (another writer: Errc::locked, at
//                           once); FROM is only read; TO inside FROM is refused (bad_argument)
//
// Invariant: a copy opens at FROM's published state (its MANIFEST and the files it names,
// copied with no writer between them).
#pragma once

#include <string>

#include "io/status.h"

namespace st::pipeline {

io::Status prepare_scratch(const std::string& dir, const std::string& database);
io::Status copy_database(const std::string& from, const std::string& to);

}  // namespace st::pipeline
