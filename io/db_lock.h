// db_lock: who may use a database directory, and how, across processes (locks on two small
// files of the directory: flock(2) on LOCK, OFD byte-range locks on READERS; the kernel drops
// both when their holder dies, so a killed process never leaves a lock behind, only its text):
//
//   DIR/LOCK     the writer (build, rebuild, commit): LOCK_EX|LOCK_NB for the writer's whole
//                life. Holds "PID CMDLINE\n" of the holder, for the refusal message only:
//                "database DIR is locked by pid N (statetree commit ...)" (Errc::locked).
//                The text of a dead holder is simply overwritten by the next one.
//   DIR/READERS  readers (verify, get, read-bench, a block's reader): shared OFD byte-range
//                locks (fcntl F_OFD_SETLK, F_RDLCK), held for the reader's whole life:
//                  byte 0      "loading": taken BEFORE the reader loads the MANIFEST, dropped
//                              once it holds its state's byte
//                  byte 1 + s  the reader walks the state of manifest commit_seq s
//                The writer's ReaderGate asks F_OFD_GETLK for a write lock over bytes
//                [0, t]: nothing in the way means no reader walks a state older than t and
//                none is loading a manifest now (a reader that comes later loads the current
//                manifest or a newer one). OFD locks belong to the open file description,
//                so a reader handle in the writer's own process counts like another process.
//
// The writer never waits for readers and readers never wait for the writer (the gate only
// tests; it never holds a lock on READERS). A reader that cannot open or create READERS
// (read-only files or mount) runs unpinned: no writer can change such a database. Both kinds
// of lock are per open file description, so two handles in one process exclude each other
// like two processes; descriptors are O_CLOEXEC (a fork without exec inherits them).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "io/status.h"

namespace st::io {

inline constexpr const char* kLockFileName = "LOCK";
inline constexpr const char* kReadersFileName = "READERS";

// The one writer of DIR (DIR must exist). Errors: Errc::locked naming the holder (at once,
// never waits), an errno (e.g. a read-only directory).
class WriterLock {
 public:
  static Status acquire(const std::string& dir, std::unique_ptr<WriterLock>* out);
  ~WriterLock();
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  explicit WriterLock(int fd) : fd_(fd) {}
  int fd_;
};

// A reader's pin on DIR's published states. *out stays null (and the result is ok) when
// READERS cannot be opened or created for lack of permission or a read-only filesystem.
// acquire() holds the "loading" byte; pin_state(seq), once the reader knows the manifest it
// walks, holds that state's byte and drops the loading one (until then every deferred page
// stays deferred, as a reader of an unknown state may hold any of them).
class ReaderPin {
 public:
  static Status acquire(const std::string& dir, std::unique_ptr<ReaderPin>* out);
  Status pin_state(uint64_t commit_seq);
  ~ReaderPin();
  ReaderPin(const ReaderPin&) = delete;
  ReaderPin& operator=(const ReaderPin&) = delete;

 private:
  explicit ReaderPin(int fd) : fd_(fd) {}
  int fd_;
};

// The writer's view of the readers: creates DIR/READERS if missing.
class ReaderGate {
 public:
  static Status open(const std::string& dir, std::unique_ptr<ReaderGate>* out);
  ~ReaderGate();
  ReaderGate(const ReaderGate&) = delete;
  ReaderGate& operator=(const ReaderGate&) = delete;
  // True if no reader walks the state of a manifest older than commit_seq and none is
  // loading a manifest now. Any error counts as "readers may exist".
  bool no_reader_before(uint64_t commit_seq);

 private:
  explicit ReaderGate(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace st::io
