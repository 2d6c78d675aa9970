// cross_page_parents: the rebuild walk (see cross_page_parents.h).
#include "engine/persist/cross_page_parents.h"

#include <string>

namespace st::persist {

io::Status CrossPageParents::rebuild(PageReader& reader, Locator root, uint32_t round_pages, uint32_t cache_pages,
                                     std::unordered_map<uint64_t, uint32_t>* live,
                                     std::unordered_map<uint64_t, uint32_t>* records) {
  invalidate();
  live->clear();
  records->clear();
  if (root == kNoLocator) {
    built_ = true;
    return {};
  }
  // pending: records whose page is not loaded; work: records of loaded pages, depth first.
  std::vector<Locator> pending{root}, batch, work;
  std::vector<uint64_t> pages;
  while (!pending.empty()) {
    if (reader.cached_pages() > cache_pages) reader.clear();
    batch.clear();
    pages.clear();
    while (!pending.empty() && pages.size() < round_pages) {
      batch.push_back(pending.back());
      pending.pop_back();
      if (!reader.loaded(locator_page(batch.back()))) pages.push_back(locator_page(batch.back()));
    }
    if (io::Status s = reader.load_pages(pages); !s.ok()) return s;
    for (Locator l : batch) {
      work.push_back(l);
      while (!work.empty()) {
        const Locator x = work.back();
        work.pop_back();
        RecordView r;
        if (io::Status s = reader.record(x, &r); !s.ok()) return s;
        const uint64_t page = locator_page(x);
        ++(*live)[page];
        (*records)[page] = reader.records_in(page);
        for (uint32_t i = 0; i < r.child_count; ++i) {
          const Locator c = r.child(i);
          if (c == kNoLocator) return {io::Errc::corrupt_page, "compaction walk: a record without a child locator"};
          note(c, x);
          (reader.loaded(locator_page(c)) ? work : pending).push_back(c);
        }
      }
    }
  }
  reader.clear();
  built_ = true;
  return {};
}

}  // namespace st::persist
