// The ordering agent's explanations into accounting, for sacct and `duet
// explain` after a job ends, where select/duet does not store them: every
// job with another select plugin (select/cons_tres, the recommended mode
// with site_factor/duet), and jobs that ended without ever being given nodes
// (cancelled while pending) with select/duet, which sees only jobs it
// placed. A job's
// ordering explanation is final once it leaves PENDING; at each re-score the
// host stores, once per text, the SystemComment of every job that has left
// PENDING and whose accounting row exists or is queued: slurmdbd gave the
// job its index, or the job ended (its completion record, queued before, makes
// the row). The text stored is the job's whole SystemComment, so what another
// writer added to it is kept. A job that slurmctld purges before the next
// re-score (MinJobAge shorter than RescoreInterval) keeps none.
//
// At slurmctld's shutdown (the plugin's fini) the host also stores the
// rank text of every pending job: after `duet-admin disable` no duet plugin
// runs when such a job starts and ends, and Slurm 22.05 never sends a
// SystemComment to slurmdbd itself (neither the start nor, through slurmdbd,
// the completion record carries it), so sacct and `duet explain` kept no
// text of jobs duet ranked but another plugin started (issue 54). Under duet
// again, the job's later text replaces it as before.
#pragma once

#include <chrono>

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "plugins/slurm/slurm_internal.h"

namespace duet::plugin {

class ExplanationStore {
 public:
  // Stores what changed since the last sweep, at most kMaxPerSweep jobs
  // (after a restart every ended job is stored again, a few rounds' worth);
  // returns how many. `placed_too`: also jobs that were given nodes (false
  // when select/duet stores those). Never throws: the caller holds at least
  // the job read lock; slurmctld only.
  size_t sweep(bool placed_too) noexcept;

  static constexpr size_t kMaxPerSweep = 256;

  // The explanation of every pending job whose accounting row exists, each
  // one synchronous request to slurmdbd; stops once `budget` is spent (a
  // slow slurmdbd must not hold slurmctld's shutdown). Returns how many.
  // Never throws: the caller holds at least the job read lock.
  static size_t store_pending(std::chrono::steady_clock::duration budget) noexcept;

 private:
  std::unordered_map<uint32_t, size_t> stored_;  // job id -> hash of the text stored
};

}  // namespace duet::plugin
