// node_store: completion messages and the submit-all / reap-all convenience loop.
#include "io/node_store.h"
#include "kernels/support/check.h"

#include <cassert>
#include <cstring>

namespace st::io {

std::string describe(const PageCompletion& c) {
  std::string s = c.kind == PageOpKind::read ? "read page " : "write page ";
  s += std::to_string(c.page_id);
  if (c.pages > 1) s += ".." + std::to_string(c.page_id + c.pages - 1);
  if (c.ok()) return s + ": ok";
  s += ": ";
  s += errc_name(c.code);
  if (c.code == Errc::sys) {
    s += " (";
    s += std::strerror(c.sys_errno);
    s += ", errno " + std::to_string(c.sys_errno) + ")";
  } else if (c.code == Errc::corrupt_page) {
    s += " (";
    s += page_check_name(c.check);
    s += ")";
  }
  return s;
}

Status run_batch(NodeStore& store, std::span<const PageOp> ops,
                 std::vector<PageCompletion>* completions) {
  assert(store.outstanding() == 0 && "run_batch needs an idle store");
  store.submit(ops);
  Status first;
  PageCompletion buf[64];
  size_t remaining = ops.size();
  while (remaining > 0) {
    const size_t n = store.reap(std::span<PageCompletion>(buf, 64), 1);
    ST_CHECK(n > 0 && n <= remaining, "run_batch: more completions than operations");
    for (size_t i = 0; i < n; ++i) {
      if (first.ok() && !buf[i].ok())
        first = Status(buf[i].code, describe(buf[i]), buf[i].sys_errno);
      if (completions) completions->push_back(buf[i]);
    }
    remaining -= n;
  }
  return first;
}

}  // namespace st::io
