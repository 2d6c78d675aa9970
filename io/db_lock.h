// db_lock: who may use a database directory, and how, across processes (flock(2) on two
// small files of the directory; the kernel drops a flock when its holder dies, so a killed
// process never leaves a lock behind, only its text):
//
//   DIR/LOCK     the writer (build, rebuild, commit): LOCK_EX|LOCK_NB for the writer's whole
//                life. Holds "PID CMDLINE\n" of the holder, for the refusal message only:
//                "database DIR is locked by pid N (statetree commit ...)" (Errc::locked).
//                The text of a dead holder is simply overwritten by the next one.
//   DIR/READERS  readers (verify, get, read-bench): LOCK_SH for the reader's whole life,
//                taken BEFORE the reader loads the MANIFEST. The writer's ReaderGate asks
//                LOCK_EX|LOCK_NB and unlocks at once: granted means no reader exists now, and
//                a reader that comes later loads the current manifest (or a newer one).
//
// The writer never waits for readers and readers never wait for the writer (a reader may
// block on LOCK_SH only for the instant the gate holds LOCK_EX). A reader that cannot open
// or create READERS (read-only files or mount) runs unpinned: no writer can change such a
// database. flock is per open file description, so two handles in one process exclude each
// other like two processes; descriptors are O_CLOEXEC (a fork without exec inherits them).
#pragma once

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
class ReaderPin {
 public:
  static Status acquire(const std::string& dir, std::unique_ptr<ReaderPin>* out);
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
  // True if no reader holds a pin now (LOCK_EX|LOCK_NB granted, released before returning).
  // Any error counts as "readers may exist".
  bool readers_absent();

 private:
  explicit ReaderGate(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace st::io
