// subtree_packer: bottom-up packing of post-order nodes into record pages (see header).
#include "engine/persist/subtree_packer.h"

#include <algorithm>
#include <numeric>

namespace st::persist {

SubtreePacker::SubtreePacker(PageWriter& out)
    : out_(out), payload_(out.payload_bytes()), open_(out.payload_bytes()) {}

void SubtreePacker::merge_into(Cluster& dst, Cluster& src) {
  const uint32_t rec_base = uint32_t(dst.recs.size());
  const uint32_t ref_base = uint32_t(dst.refs.size());
  const uint32_t byte_base = uint32_t(dst.bytes.size());
  for (Rec r : src.recs) {
    r.body_begin += byte_base;
    r.child_begin += ref_base;
    dst.recs.push_back(r);
  }
  for (Ref f : src.refs) {
    if (f.local) f.value += rec_base;
    dst.refs.push_back(f);
  }
  dst.bytes.insert(dst.bytes.end(), src.bytes.begin(), src.bytes.end());
  dst.footprint += src.footprint;
}

io::Status SubtreePacker::seal() {
  if (open_.records() == 0) return {};
  std::vector<uint8_t>& buf = page_buf_;
  buf.resize(payload_);
  open_.finish(buf.data());
  if (io::Status s = out_.write(open_page_, buf.data()); !s.ok()) return s;
  ++stats_.pages;
  stats_.payload_bytes += payload_;
  open_.clear();
  open_page_ = ~uint64_t(0);
  return {};
}

io::Status SubtreePacker::place(Cluster& c, Locator* root) {
  if (c.placed != kNoLocator) {
    *root = c.placed;
    return {};
  }
  if (open_.records() > 0 && open_.bytes_used() + c.footprint > payload_)
    if (io::Status s = seal(); !s.ok()) return s;
  if (open_.records() == 0)
    if (io::Status s = out_.new_page(&open_page_); !s.ok()) return s;
  const uint32_t base = open_.records();
  std::vector<Locator>& kids = kid_buf_;
  for (size_t k = 0; k < c.recs.size(); ++k) {
    const Rec& r = c.recs[k];
    kids.clear();
    for (uint32_t i = 0; i < r.child_n; ++i) {
      const Ref& f = c.refs[r.child_begin + i];
      kids.push_back(f.local ? make_locator(open_page_, base + uint32_t(f.value)) : f.value);
    }
    open_.add(r.kind, kids, std::span<const uint8_t>(c.bytes.data() + r.body_begin, r.body_len));
    if (edge_sink_)
      for (Locator kid : kids) edge_sink_->note(kid, make_locator(open_page_, base + uint32_t(k)));
  }
  *root = make_locator(open_page_, base + uint32_t(c.recs.size()) - 1);
  stats_.records += c.recs.size();
  stats_.record_bytes += c.footprint;
  return {};
}

io::Status SubtreePacker::push(uint8_t kind, std::span<const uint8_t> body, uint32_t child_count) {
  if (child_count > kMaxChildren || child_count > stack_.size())
    return io::Status(io::Errc::bad_argument, "packer: node with " + std::to_string(child_count) +
                                                  " children but " + std::to_string(stack_.size()) + " pending");
  const uint32_t own = record_footprint(body.size(), child_count);
  const uint32_t room = payload_ - kPageHeaderBytes;
  if (own > room)
    return io::Status(io::Errc::bad_argument, "a node of " + std::to_string(body.size()) + " bytes with " +
                                                  std::to_string(child_count) + " children does not fit a " +
                                                  std::to_string(payload_ + io::kPageTrailerBytes) + "-byte page");
  const size_t first = stack_.size() - child_count;
  uint64_t total = own;
  for (size_t i = first; i < stack_.size(); ++i) total += stack_[i].footprint;

  // Children that do not fit with their parent are placed, largest first.
  std::vector<Locator> placed(child_count, kNoLocator);
  if (total > room) {
    std::vector<uint32_t> order(child_count);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return stack_[first + a].footprint > stack_[first + b].footprint;
    });
    for (uint32_t i : order) {
      if (total <= room) break;
      Cluster& c = stack_[first + i];
      if (io::Status s = place(c, &placed[i]); !s.ok()) return s;
      total -= c.footprint;
    }
  }

  Cluster parent;
  if (!spare_.empty()) {
    parent = std::move(spare_.back());
    spare_.pop_back();
    parent.recs.clear();
    parent.refs.clear();
    parent.bytes.clear();
    parent.footprint = 0;
    parent.placed = kNoLocator;
  }
  std::vector<Ref> refs(child_count);
  for (uint32_t i = 0; i < child_count; ++i) {
    Cluster& c = stack_[first + i];
    if (placed[i] == kNoLocator && c.placed != kNoLocator) placed[i] = c.placed;
    if (placed[i] != kNoLocator) {
      refs[i] = {false, placed[i]};
    } else {
      merge_into(parent, c);
      refs[i] = {true, uint64_t(parent.recs.size() - 1)};
    }
  }
  Rec r{kind, uint32_t(parent.bytes.size()), uint32_t(body.size()), uint32_t(parent.refs.size()), child_count};
  parent.bytes.insert(parent.bytes.end(), body.begin(), body.end());
  parent.refs.insert(parent.refs.end(), refs.begin(), refs.end());
  parent.recs.push_back(r);
  parent.footprint += own;
  for (size_t i = first; i < stack_.size(); ++i) spare_.push_back(std::move(stack_[i]));
  stack_.resize(first);
  stack_.push_back(std::move(parent));
  return {};
}

void SubtreePacker::push_placed(Locator placed) {
  Cluster c;
  if (!spare_.empty()) {
    c = std::move(spare_.back());
    spare_.pop_back();
    c.recs.clear();
    c.refs.clear();
    c.bytes.clear();
  }
  c.footprint = 0;
  c.placed = placed;
  stack_.push_back(std::move(c));
}

io::Status SubtreePacker::finish(std::vector<Locator>* roots) {
  roots->assign(stack_.size(), kNoLocator);
  for (size_t i = 0; i < stack_.size(); ++i)
    if (io::Status s = place(stack_[i], &(*roots)[i]); !s.ok()) return s;
  stack_.clear();
  return seal();
}

}  // namespace st::persist
