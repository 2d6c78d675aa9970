// block_file: reading and writing block files (the format of engine/state/bal.h) on disk.
// Writes go to FILE.tmp, then rename: a reader never sees half a file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/state/bal.h"

namespace st::workloads {

// Reads and strictly decodes FILE. Error: one line naming the file.
std::optional<std::string> read_block_file(const std::string& path, std::vector<state::Block>* out,
                                           uint64_t* bytes = nullptr);
std::optional<std::string> write_block_file(const std::string& path, const std::vector<state::Block>& blocks);

}  // namespace st::workloads
