// block_file: see block_file.h.
#include "workloads/block_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace st::workloads {

std::optional<std::string> read_block_file(const std::string& path, std::vector<state::Block>* out, uint64_t* bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return path + ": is a directory, not a block file";
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot open (" + std::strerror(errno) + ")";
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return path + ": read error";
  if (bytes) *bytes = data.size();
  std::string err;
  if (!state::decode_blocks(data, out, &err)) return path + ": " + err;
  return std::nullopt;
}

std::optional<std::string> write_block_file(const std::string& path, const std::vector<state::Block>& blocks) {
  const std::vector<uint8_t> data = state::encode_blocks(blocks);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return tmp + ": cannot create (" + std::strerror(errno) + ")";
    f.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
    f.flush();
    if (!f) return tmp + ": write error";
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return path + ": cannot rename into place (" + ec.message() + ")";
  return std::nullopt;
}

}  // namespace st::workloads
