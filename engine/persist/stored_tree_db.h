// stored_tree_db: StoredTreeDb, what a tree's read side (bintrie/tree_db.h, mpt/tree_db.h)
// takes from its database files alone: the manifest, the source spec, the data files, the
// arena's page reader (none on RocksDB), its read-latency sink and the flat snapshot.
//
// Invariants: reader_ exists iff the store is the arena, reads files_.arena's pages, and
// is declared after files_ (so it is destroyed first).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/persist/db_files.h"
#include "engine/persist/page_reader.h"
#include "engine/persist/snapshot/reader.h"
#include "engine/persist/tree_db.h"

namespace st::persist {

class StoredTreeDb : public TreeDb {
 public:
  explicit StoredTreeDb(DbFiles&& f) : files_(std::move(f)) {
    if (files_.store == StoreKind::arena) reader_ = std::make_unique<PageReader>(files_.arena->pages());
  }

  const io::Manifest& manifest() const override { return files_.manifest; }
  const std::string& source_spec() const override { return files_.commit.spec; }
  std::vector<std::string> data_files() const override { return files_.data_files(); }
  PageReader* page_reader() override { return reader_.get(); }
  void record_read_latency(stats::LogHistogram* sink) override {
    if (reader_) reader_->set_latency_sink(sink);
  }
  io::Status open_snapshot(std::unique_ptr<SnapshotReader>* out) override { return open_snapshot_of(files_, out); }
  io::Status open_snapshot_table(std::unique_ptr<SnapshotTable>* out) override { return open_snapshot_table_of(files_, out); }

 protected:
  DbFiles files_;
  std::unique_ptr<PageReader> reader_;
};

}  // namespace st::persist
