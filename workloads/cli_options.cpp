// cli_options: the shared option declarations (see cli_options.h).
#include "workloads/cli_options.h"

namespace st::cli {

void add_db(Args& args, const std::string& help) { args.option("db", "DIR", help); }

void add_queue_depth(Args& args, const std::string& help, uint64_t default_qd) {
  args.option_u64("qd", "Q", help, kQueueDepthMin, kQueueDepthMax, default_qd);
}

uint32_t queue_depth(const Args& args) { return uint32_t(args.get_u64("qd")); }

std::vector<uint32_t> queue_depths(const Args& args) {
  std::vector<uint32_t> out;
  for (uint64_t qd : args.get_u64_list("qd")) out.push_back(uint32_t(qd));
  return out;
}

void add_queue_depth_list(Args& args, const std::string& help, const std::string& default_list) {
  args.option_u64_list("qd", "LIST", help, kQueueDepthMin, kQueueDepthMax, default_list);
}

void add_seed(Args& args, const std::string& help, std::optional<uint64_t> default_seed, const std::string& value_name) {
  args.option_u64("seed", value_name, help, 0, UINT64_MAX, default_seed);
}

void add_reps(Args& args, const std::string& help, uint64_t default_reps, uint64_t max_reps) {
  args.option_u64("reps", "R", help, 1, max_reps, default_reps);
}

void add_warmup(Args& args, const std::string& help) {
  args.option_u64("warmup", "W", help, 0, kWarmupMax, kWarmupDefault);
}

void add_cold(Args& args, const std::string& help) { args.flag("cold", help); }

void add_json(Args& args, const std::string& help) { args.flag("json", help); }

void add_tree(Args& args, const std::string& help, std::optional<std::string> default_tree) {
  args.option_one_of("tree", "T", help, {"mpt", "bintrie"}, std::move(default_tree));
}

void add_store(Args& args, const std::string& help, std::optional<std::string> default_store) {
  args.option_one_of("store", "S", help, {"arena", "rocksdb"}, std::move(default_store));
}

void add_page_size(Args& args, const std::string& help, uint64_t default_bytes) {
  args.option_u64_one_of("page-size", "B", help, {4096, 16384}, default_bytes);
}

}  // namespace st::cli
