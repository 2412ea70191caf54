#!/usr/bin/env bash
# priority/duet and select/duet load in slurmctld (log lines, scontrol show
# config), stay quiet in clients (sinfo, srun), and report duet.conf errors
# with file and line while carrying on.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins

duet_cluster_up --nodes 2 --mix v100:4
grep -q 'Priority duet (learned ordering) plugin loaded' "$CTLD_LOG" || fail "priority/duet not loaded: $(tail -5 "$CTLD_LOG")"
grep -q 'select/duet: ranker ' "$CTLD_LOG" || fail "select/duet not initialised in slurmctld"
cfg=$(timeout 10 scontrol show config)
grep -Eq '^PriorityType +\= priority/duet' <<<"$cfg" || fail "PriorityType: $(grep PriorityType <<<"$cfg")"
grep -Eq '^SelectType +\= select/duet' <<<"$cfg" || fail "SelectType: $(grep SelectType <<<"$cfg")"
note "$(grep -E 'priority/duet|select/duet' "$CTLD_LOG" | head -4)"

# clients load every select plugin in PluginDir: quiet, and they still work
out=$(timeout 20 srun -N1 --gres=gpu:1 bash -c 'echo CVD=$CUDA_VISIBLE_DEVICES' 2>&1) || fail "srun: $out"
[ "$out" = "CVD=0" ] || fail "srun printed more than the job's output: '$out'"
out=$(timeout 10 sinfo -h -o %P 2>&1)
[ "$out" = "gpu*" ] || fail "sinfo printed: '$out'"

# a bad duet.conf: each problem with file:line:column, slurmctld keeps running
printf '%s\n' 'Scorer=small-first' 'RescoreInterval=0' 'Frobnicate=yes' > "$DUET_CONF"
before=$(wc -l < "$CTLD_LOG")
timeout 20 scontrol reconfigure || fail "reconfigure"
wait_log_after "$before" "priority/duet: $DUET_CONF:2:17: RescoreInterval: expected an integer 1..3600, got '0'" 10
wait_log_after "$before" "duet.conf:3:1: unknown key 'Frobnicate'" 10
wait_log_after "$before" 'priority/duet: scorer small-first, re-score every 5 s' 10
ctld_alive || fail "slurmctld died on a bad duet.conf"
echo "PASS: both plugins load in slurmctld, clients quiet, duet.conf errors located (up in ${CLUSTER_UP_S} s)"
