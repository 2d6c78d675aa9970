// input_file: read-only view of an input file given on the command line (a genesis JSON, a
// --kv list), mapped into memory (MAP_POPULATE up to 4 GiB, MADV_SEQUENTIAL).
//
// Invariants: only regular files are opened for reading; a directory, FIFO, socket or device
// is refused before a byte is read (the open is non-blocking, so a FIFO without a writer
// cannot hang the process, and the type is checked with fstat on the opened descriptor).
// Errors are one line: "cannot open <what><path>: <strerror>" or "<what><path>: is a directory". The view stays valid while the object
// lives; an empty file gives an empty view.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

namespace st::workloads {

class InputFile {
 public:
  InputFile() = default;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  InputFile(InputFile&& o) noexcept;
  InputFile& operator=(InputFile&& o) noexcept;
  ~InputFile();

  std::string_view text() const { return {data_, size_}; }

  // Opens and maps `path`; `what` is put before the path in errors (e.g. "--kv file ", or "").
  static std::variant<InputFile, std::string> open(const std::string& path, const std::string& what);

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;  // munmap target (nullptr for an empty file)
};

}  // namespace st::workloads
