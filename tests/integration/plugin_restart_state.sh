#!/usr/bin/env bash
# select/duet's observer learns from finished jobs; its state is saved in
# StateSaveLocation and is the same after a slurmctld restart; learning then
# continues from it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins

duet_cluster_up --nodes 2 --mix v100:4
write_duet_conf Scorer=small-first Ranker=none Observer=node-stats LogLevel=verbose

js=()
for g in 1 2 4; do js+=("$(sbatch --parsable -o /dev/null --gres=gpu:$g --wrap 'sleep 1')"); done
wait_state 30 COMPLETED "${js[@]}"
last_summary() { grep 'select/duet: observer node-stats updated by' "$CTLD_LOG" | tail -n1 | sed 's/.* s): //'; }
jobs_in() { grep -o 'jobs=[0-9]*' <<<"$1" | cut -d= -f2 | paste -sd+ | bc; }
# the observer logs its summary once it has taken the completions in
for _ in $(seq 100); do before=$(last_summary); [ "$(jobs_in "$before")" -ge 3 ] 2>/dev/null && break; sleep 0.1; done
note "learned before restart: $before"
[ "$(jobs_in "$before")" -ge 3 ] || fail "3 jobs not observed: $before"
[ -s "$CLUSTER_DIR/state/duet_select_state" ] || fail "no state file in StateSaveLocation"

# restart slurmctld
restart_ctld
after=$(observer_restored node-stats)
note "restored after restart:  $after"
[ "$after" = "$before" ] || fail "state changed over the restart: '$before' vs '$after'"

# learning continues from the restored state
wait_idle 10 node1
j=$(sbatch --parsable -o /dev/null -w node1 --gres=gpu:1 --wrap 'sleep 1') || fail sbatch
wait_state 30 COMPLETED "$j"
n_before=$(grep -o 'node1:jobs=[0-9]*' <<<"$before" | cut -d= -f2); n_before=${n_before:-0}
for _ in $(seq 100); do
  n_now=$(last_summary | grep -o 'node1:jobs=[0-9]*' | cut -d= -f2)
  [ "${n_now:-0}" -gt "$n_before" ] && break
  sleep 0.1
done
[ "$n_now" = $((n_before + 1)) ] || fail "node1 jobs $n_before -> $n_now after one more job"
echo "PASS: observer state identical across a slurmctld restart ($after), then grows"
