// cli_options: the options several commands share, each declared here once with its name,
// range and default, so a command names the option and (where it reads differently there)
// its help line, never its range. Values are read back with Args::get_u64 / get_u64_list /
// str / given as before; the ranges below are what parse() enforces.
//
// Invariants: every command that takes --qd accepts exactly [kQueueDepthMin, kQueueDepthMax];
// every --seed takes any unsigned 64-bit value; --page-size is one of kPageSizes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/cli_args.h"

namespace st::cli {

inline constexpr uint64_t kQueueDepthMin = 1;
inline constexpr uint64_t kQueueDepthMax = 4096;
inline constexpr uint64_t kQueueDepthDefault = 32;
inline constexpr uint64_t kWarmupMax = 100000;
inline constexpr uint64_t kWarmupDefault = 32;

// --db DIR: the database directory.
void add_db(Args& args, const std::string& help = "database directory");
// --qd Q: one queue depth (reads or writes in flight).
void add_queue_depth(Args& args, const std::string& help, uint64_t default_qd = kQueueDepthDefault);
// The value of --qd (one queue depth), and of --qd LIST.
uint32_t queue_depth(const Args& args);
std::vector<uint32_t> queue_depths(const Args& args);
// --qd LIST: comma-separated queue depths, each in the --qd range.
void add_queue_depth_list(Args& args, const std::string& help, const std::string& default_list);
// --seed X: a seed; nullopt default = the command decides when it is not given.
void add_seed(Args& args, const std::string& help, std::optional<uint64_t> default_seed = 1,
              const std::string& value_name = "X");
// --reps R: timed repetitions in [1, max_reps].
void add_reps(Args& args, const std::string& help, uint64_t default_reps, uint64_t max_reps = 1000);
// --warmup W: untimed reads before each timed run.
void add_warmup(Args& args, const std::string& help);
// --cold: evict the files from the OS page cache before timing.
void add_cold(Args& args, const std::string& help);
// --json: one JSON object on stdout.
void add_json(Args& args, const std::string& help = "print one JSON object on stdout");
// --tree T: mpt or bintrie.
void add_tree(Args& args, const std::string& help = "the tree", std::optional<std::string> default_tree = std::nullopt);
// --store S: arena or rocksdb.
void add_store(Args& args, const std::string& help, std::optional<std::string> default_store = "arena");
// --page-size B: an arena page size, 4096 or 16384.
void add_page_size(Args& args, const std::string& help, uint64_t default_bytes = 4096);

}  // namespace st::cli
