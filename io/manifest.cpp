// manifest: encoding, parameter checks and the two ManifestSlot implementations.
// The file slot's publish order is what makes a commit atomic on ext4/xfs: the new bytes are
// durable in MANIFEST.tmp before rename() swaps the name, and the directory fsync makes
// the rename itself durable. A crash before the rename leaves the old MANIFEST in place.
#include "io/manifest.h"

#include "kernels/support/byte_order.h"
#include "io/disk_space.h"
#include "io/page_format.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "io/crc32c.h"

namespace st::io {
namespace {

constexpr uint32_t kManifestMagic = 0x464d5453u;  // "STMF"


Status write_all(int fd, const uint8_t* p, size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::from_errno(errno, "write " + path);
    }
    p += w;
    n -= size_t(w);
  }
  return {};
}

Status fsync_path(const std::string& path, int open_flags) {
  const int fd = ::open(path.c_str(), open_flags | O_CLOEXEC);
  if (fd < 0) return Status::from_errno(errno, "open " + path + " for fsync");
  int r;
  do r = ::fsync(fd);
  while (r != 0 && errno == EINTR);
  const int err = errno;
  ::close(fd);
  return r == 0 ? Status() : Status::from_errno(err, "fsync " + path);
}

std::string mismatch(const char* what, const std::string& disk, const std::string& wanted) {
  return std::string(what) + " mismatch: database built with " + disk + ", opened with " + wanted;
}

}  // namespace

std::array<uint8_t, kManifestBytes> encode_manifest(const Manifest& m) {
  std::array<uint8_t, kManifestBytes> b{};
  put_u32(&b[0], kManifestMagic);
  put_u32(&b[4], m.params.format_version);
  b[8] = uint8_t(m.params.tree_kind);
  b[9] = uint8_t(m.params.hash_kind);
  put_u32(&b[12], m.params.group_depth);
  put_u32(&b[16], m.params.page_size);
  put_u64(&b[24], m.commit_seq);
  std::memcpy(&b[32], m.root_hash.data(), 32);
  put_u64(&b[64], m.root_page);
  put_u64(&b[72], m.page_high_water);
  put_u64(&b[80], m.free_list_page);
  put_u64(&b[88], m.free_list_pages);
  put_u64(&b[96], m.node_count);
  put_u64(&b[104], m.pages_used);
  put_u64(&b[112], m.key_count);
  put_u64(&b[120], m.payload_bytes);
  put_u32(&b[140], crc32c(b.data(), 140));
  return b;
}

Status decode_manifest(const uint8_t* b, size_t size, Manifest* out) {
  if (size != kManifestBytes)
    return Status(Errc::corrupt_page, "manifest is " + std::to_string(size) + " bytes, expected " +
                                          std::to_string(kManifestBytes));
  if (get_u32(&b[0]) != kManifestMagic) return Status(Errc::corrupt_page, "manifest: bad magic");
  if (crc32c(b, 140) != get_u32(&b[140])) return Status(Errc::corrupt_page, "manifest: checksum mismatch");
  Manifest m;
  m.params.format_version = get_u32(&b[4]);
  if (m.params.format_version != kManifestFormatVersion)
    return Status(Errc::mismatch, mismatch("format version", std::to_string(m.params.format_version),
                                           std::to_string(kManifestFormatVersion) + " (this build)") +
                                      (m.params.format_version < kManifestFormatVersion
                                           ? "; rebuild it with statetree build --force"
                                           : ""));
  m.params.tree_kind = TreeKind(b[8]);
  m.params.hash_kind = HashKind(b[9]);
  m.params.group_depth = get_u32(&b[12]);
  m.params.page_size = get_u32(&b[16]);
  // Checksummed is not the same as sane: fields that select code paths must name ones
  // that exist (sizes against the arena are CowSpace::open's check).
  if (b[8] < uint8_t(TreeKind::merkle) || b[8] > uint8_t(TreeKind::bintrie))
    return Status(Errc::corrupt_page, "manifest: unknown tree kind " + std::to_string(b[8]));
  if (b[9] < uint8_t(HashKind::sha256) || b[9] > uint8_t(HashKind::blake3))
    return Status(Errc::corrupt_page, "manifest: unknown hash kind " + std::to_string(b[9]));
  if (!valid_page_size(m.params.page_size))
    return Status(Errc::corrupt_page, "manifest: page size " + std::to_string(m.params.page_size) +
                                          " is not 4096 or 16384");
  m.commit_seq = get_u64(&b[24]);
  std::memcpy(m.root_hash.data(), &b[32], 32);
  m.root_page = get_u64(&b[64]);
  m.page_high_water = get_u64(&b[72]);
  m.free_list_page = get_u64(&b[80]);
  m.free_list_pages = get_u64(&b[88]);
  m.node_count = get_u64(&b[96]);
  m.pages_used = get_u64(&b[104]);
  m.key_count = get_u64(&b[112]);
  m.payload_bytes = get_u64(&b[120]);
  *out = m;
  return {};
}

Status check_params(const StoreParams& d, const StoreParams& w) {
  if (d.format_version != w.format_version)
    return Status(Errc::mismatch, mismatch("format version", std::to_string(d.format_version),
                                           std::to_string(w.format_version)));
  if (d.tree_kind != w.tree_kind)
    return Status(Errc::mismatch, mismatch("tree", tree_kind_name(d.tree_kind), tree_kind_name(w.tree_kind)));
  if (d.hash_kind != w.hash_kind)
    return Status(Errc::mismatch, mismatch("hash", hash_kind_name(d.hash_kind), hash_kind_name(w.hash_kind)));
  if (d.group_depth != w.group_depth)
    return Status(Errc::mismatch, mismatch("group depth", std::to_string(d.group_depth),
                                           std::to_string(w.group_depth)));
  if (d.page_size != w.page_size)
    return Status(Errc::mismatch, mismatch("page size", std::to_string(d.page_size),
                                           std::to_string(w.page_size)));
  return {};
}

Status FileManifestSlot::publish(const Manifest& m) {
  outcome_unknown_ = false;
  const auto bytes = encode_manifest(m);
  const std::string tmp = dir_ + "/MANIFEST.tmp", final_path = path();
  // Before the rename nothing is published: a failure removes the temp file and leaves the
  // previous manifest current. A full disk is the one-line "no space left on device" error.
  auto failed = [&](int err, const std::string& what) {
    ::unlink(tmp.c_str());
    if (is_no_space_errno(err)) return no_space(dir_, kManifestBytes, what + " " + tmp);
    return Status::from_errno(err, what + " " + tmp);
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return failed(errno, "open");
  Status s = write_all(fd, bytes.data(), bytes.size(), tmp);
  if (!s.ok()) {
    ::close(fd);
    return failed(s.sys_errno(), "write");
  }
  if (stop_after_step == 1) { ::close(fd); return Status(Errc::injected_fault, "publish stopped after write"); }
  int r;
  do r = ::fsync(fd);
  while (r != 0 && errno == EINTR);
  const int fsync_err = r != 0 ? errno : 0;
  ::close(fd);
  if (fsync_err != 0) return failed(fsync_err, "fsync");
  if (stop_after_step == 2) return Status(Errc::injected_fault, "publish stopped after fsync");
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::from_errno(err, "rename " + tmp + " -> " + final_path);
  }
  if (stop_after_step == 3) {
    outcome_unknown_ = true;
    return Status(Errc::injected_fault, "publish stopped after rename");
  }
  Status d = fsync_path(dir_, O_RDONLY | O_DIRECTORY);
  if (!d.ok()) outcome_unknown_ = true;  // the rename may or may not survive a crash
  return d;
}

Status FileManifestSlot::load(Manifest* out) {
  const std::string p = path();
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status(Errc::not_found, "no manifest in " + dir_ + " (not a statetree database?)");
    return Status::from_errno(errno, "open " + p);
  }
  uint8_t buf[kManifestBytes + 1];
  size_t got = 0;
  for (;;) {
    const ssize_t r = ::read(fd, buf + got, sizeof(buf) - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Status::from_errno(err, "read " + p);
    }
    if (r == 0 || got + size_t(r) == sizeof(buf)) { got += size_t(r); break; }
    got += size_t(r);
  }
  ::close(fd);
  Status s = decode_manifest(buf, got, out);
  if (!s.ok() && s.code() == Errc::corrupt_page) return Status(Errc::corrupt_page, p + ": " + s.message());
  return s;
}

Status MemoryManifestSlot::publish(const Manifest& m) {
  if (fail_next_publish) {
    fail_next_publish = false;
    return Status(Errc::injected_fault, "manifest publish failed (injected)");
  }
  durable_ = encode_manifest(m);
  return {};
}

Status MemoryManifestSlot::load(Manifest* out) {
  if (!durable_) return Status(Errc::not_found, "no manifest published");
  return decode_manifest(durable_->data(), durable_->size(), out);
}

}  // namespace st::io
