// What slurmctld measured of finished jobs, and the run time it expects of
// the next run of the same work: the expectation select/duet's online
// learning measures a node against (placement_model.cc, speed_estimates.h).
// Slurm-free.
//
// Runs of the same work: one user's jobs of one name on one number of GPUs,
// each on one node. The name is the user's, but it only groups that user's
// own runs: an expectation is always made of run times slurmctld measured
// (end - start), never of a number a user wrote (a comment's ref=), and one
// user's runs never set another user's expectation.
#pragma once

#include <compare>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace duet::plugin {

struct RunKey {
  std::uint32_t user = 0;
  std::uint32_t gpus = 0;
  std::uint64_t name_hash = 0;  // FNV-1a of the job name: the state file never holds user text
  auto operator<=>(const RunKey&) const = default;
};
RunKey run_key(std::uint32_t user, std::uint32_t gpus, std::string_view name);

class RunHistory {
 public:
  static constexpr std::size_t kRunsPerKey = 8;  // the latest runs kept per key
  static constexpr std::size_t kMaxKeys = 512;   // then the key run least recently goes
  static constexpr std::size_t kMinOthers = 2;   // runs on other nodes an expectation needs

  // The work of one more run of `key` on `node`, in seconds at speed 1: the
  // median, over the key's runs on other nodes, of run seconds x speed(that
  // node). Never the node's own runs (they would measure it against itself).
  // nullopt with fewer than kMinOthers such runs.
  std::optional<double> expected_work(const RunKey& key, std::string_view node,
                                      const std::function<double(std::string_view)>& speed) const;
  void record(const RunKey& key, const std::string& node, double run_s, std::int64_t time);
  std::size_t runs() const;

  // Lines "run USER GPUS NAMEHASH TIME RUN_SECONDS NODE", oldest first per key.
  void save(std::ostream& out) const;
  // One saved line; false when it is not one of ours or does not read.
  bool restore_line(std::string_view line);
  void clear() { keys_.clear(); }

 private:
  struct Run {
    std::int64_t time;
    double run_s;
    std::string node;
  };
  struct Runs {
    std::deque<Run> runs;  // oldest first
    std::int64_t last = 0;
  };
  void append(const RunKey& key, Run run);
  std::map<RunKey, Runs> keys_;
};

}  // namespace duet::plugin
