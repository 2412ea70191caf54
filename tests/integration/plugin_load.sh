#!/usr/bin/env bash
# priority/duet and select/duet load in slurmctld (log lines, scontrol show
# config) and are connected through the agents' channel, stay quiet in
# clients (sinfo, srun), and report duet.conf errors with file and line while
# carrying on. priority/duet with select/cons_tres: no placement agent on the
# channel (zeros), and jobs are scheduled as before.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins

duet_cluster_up --nodes 2 --mix v100:4
grep -q 'Priority duet (learned ordering) plugin loaded' "$CTLD_LOG" || fail "priority/duet not loaded: $(tail -5 "$CTLD_LOG")"
grep -q 'select/duet: ranker ' "$CTLD_LOG" || fail "select/duet not initialised in slurmctld"
grep -qF "Priority duet (learned ordering) plugin loaded; agent channel: connected to select/duet's placement agent" "$CTLD_LOG" \
  || fail "priority/duet not connected to select/duet: $(grep 'agent channel' "$CTLD_LOG")"
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
up1=$CLUSTER_UP_S

# priority/duet over select/cons_tres (select_duet.so still in PluginDir, so
# slurmctld loads it too, unused): no placement agent, GPU jobs still run
cluster_down
duet_cluster_up --nodes 2 --mix v100:4 --set SelectType=select/cons_tres
grep -qF "Priority duet (learned ordering) plugin loaded; agent channel: no placement agent (SelectType is not select/duet)" "$CTLD_LOG" \
  || fail "priority/duet with select/cons_tres: $(grep -E 'agent channel|priority/duet' "$CTLD_LOG" | head -3)"
grep -Eq '^SelectType +\= select/cons_tres' <<<"$(timeout 10 scontrol show config)" || fail "SelectType not cons_tres"
j=$(sbatch --parsable -o /dev/null --gres=gpu:1 --wrap 'sleep 1') || fail sbatch
wait_state 30 COMPLETED "$j"
[ "$(prio "$j")" -gt 0 ] || fail "job $j priority $(prio "$j")"
ctld_alive || fail "slurmctld died with select/cons_tres"
echo "PASS: both plugins load in slurmctld, connected through the agents' channel, clients quiet, duet.conf errors located; priority/duet alone over cons_tres (up in ${up1} s)"
