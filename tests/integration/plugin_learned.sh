#!/usr/bin/env bash
# Scorer=model and Ranker=model with a model file (`duet model init`, any
# model works: nothing here depends on what it learned):
#  - both plugins log the learned agent with the model file's cksum;
#  - a job lands on the node the placement agent scores best (explanation),
#    ranked by its type's speeds (JobTypeSpeedsFile, its comment's type);
#  - its run time, as slurmctld measured it, is recorded for the RWGP's
#    online learning (the comment's ref= plays no part: issue 52), saved in
#    StateSaveLocation and the same after a slurmctld restart;
#  - pending GPU jobs are scored by the ordering network (non-zero scores,
#    while the fallback's weights are 0, so a fallback would score all 0)
#    and their priorities follow its scores;
#  - the agents talk (agent_channel.h): the ordering agent scores with the
#    placement agent's message, and the jobs are placed with the ordering
#    agent's message for each (both said in the explanations);
#  - slurmctld runs both agents without loading LibTorch.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
duet="${DUET:-$top_builddir/duet}"
[ -x "$duet" ] || skip "no duet program in $top_builddir"

duet_cluster_up --nodes 4 --mix v100:4 --speeds 0.6,1.2,0.8,1.0
model="$CLUSTER_DIR/etc/duet.model"
"$duet" model init --out "$model" --seed 7 >/dev/null || fail "duet model init"
crc=$(cksum < "$model" | cut -d' ' -f1)
cp "$top_srcdir/data/gavel/simulation_throughputs.json" "$CLUSTER_DIR/etc/gavel.json"
mark=$(wc -l < "$CTLD_LOG")
write_duet_conf Scorer=model "ModelPath=$model" Ranker=model "PlacementModelPath=$model" \
  "NodeSpeedsFile=$CLUSTER_DIR/nodes.csv" "JobTypeSpeedsFile=$CLUSTER_DIR/etc/gavel.json" RescoreInterval=1 \
  FallbackAgeWeight=0 FallbackSizeWeight=0 LogLevel=verbose
agent="model(cksum $crc, format 1)"
since_conf() { tail -n +"$((mark + 1))" "$CTLD_LOG"; }
since_conf | grep -F "priority/duet: scorer $agent" >/dev/null || fail "priority/duet did not load the model: $(since_conf | grep 'priority/duet: scorer' | tail -1)"
since_conf | grep -F "select/duet: ranker $agent, observer rwgp" >/dev/null || fail "select/duet did not load the model: $(since_conf | grep 'select/duet: ranker' | tail -1)"
! since_conf | grep "cannot use scorer\|placing by cons_tres's own order" || fail "an agent failed to load"
note "both plugins: $agent"

# placement: on the idle cluster, a 1-GPU job goes where the agent prefers
type='ResNet-50 (batch size 32)'
j=$(sbatch --parsable -o /dev/null --gres=gpu:1 "--comment=duet:ref=2;type=$type" --wrap 'sleep 2') || fail sbatch
wait_state 20 RUNNING "$j"
e=$(explanation "$j")
note "explanation: $e"
best=$(sed -n "s/.*: model(cksum $crc, format 1): best \(node[0-9]*\) .*/\1/p" <<<"$e")
[ -n "$best" ] || fail "no placement by the model in the explanation of $j: $e"
[ "$(field "$j" NodeList)" = "$best" ] || fail "job $j on $(field "$j" NodeList), the agent preferred $best"
grep -qF "best $best (its type's speed" <<<"$e" || fail "job $j of type '$type' not ranked by its type's speeds: $e"

# learning: the measured run time is recorded (one run; nothing to compare
# it with yet, so no estimate moves)
wait_state 30 COMPLETED "$j"
for i in $(seq 50); do grep -q "select/duet: observer rwgp updated by JobId=$j" "$CTLD_LOG" && break; sleep 0.1; done
before=$(grep "select/duet: observer rwgp updated by JobId=$j" "$CTLD_LOG" | tail -n1 | sed 's/.* s): //')
note "GP after one job: $before"
[[ "$before" == "1 runs measured, 0 moves in the last hour "* ]] || fail "run of $j not recorded: '$before'"
grep -q "^run 0 1 [0-9]* [0-9]* [0-9.e+]* $best\$" "$CLUSTER_DIR/state/duet_select_state" \
  || fail "no run of root's job on $best in the state file: $(paste -sd';' "$CLUSTER_DIR/state/duet_select_state")"

restart_ctld
after=$(observer_restored rwgp)
note "GP after restart:   $after"
[ "$after" = "$before" ] || fail "GP posterior changed over the restart: '$before' vs '$after'"
tail -n +"$((CTLD_MARK + 1))" "$CTLD_LOG" | grep -F "priority/duet: scorer $agent" >/dev/null || fail "ordering agent not loaded after restart"

# ordering: pending GPU jobs ranked by the network
for i in $(seq 50); do [ "$(timeout 5 sinfo -h -o %T | sort -u | paste -sd,)" = idle ] && break; sleep 0.2; done
blocker=$(block_gpus 4 4)
js=()
for g in 4 1 3 2; do js+=("$(sbatch --parsable -o /dev/null --gres=gpu:$g "--comment=duet:ref=5;type=$type" --wrap 'sleep 1')"); done
# One `scontrol show job` is one consistent snapshot (a re-score writes all
# priorities and explanations under one job write lock): "ID PRIORITY SCORE".
snapshot() {
  { timeout 10 scontrol -o show job 2>/dev/null || true; } | { grep -F " by $agent" || true; } \
    | { grep -E "^JobId=($(printf '%s\n' "${js[@]}" | paste -sd'|')) " || true; } \
    | sed -n 's/^JobId=\([0-9]*\) .* Priority=\([0-9]*\) .*SystemComment=duet: rank [0-9]*\/[0-9]* score \([^ ]*\) by .*/\1 \2 \3/p'
}
ok=0
for i in $(seq 50); do
  snap=$(snapshot)
  if [ "$(wc -l <<<"$snap")" = 4 ]; then ok=1; break; fi
  sleep 0.2
done
[ $ok = 1 ] || fail "jobs not ranked by the model: $(for x in "${js[@]}"; do explanation "$x"; done | paste -sd'|')"
note "id priority score: $(paste -sd';' <<<"$snap")"
scores=$(awk '{print $3}' <<<"$snap")
[ "$(sort -u <<<"$scores" | wc -l)" -gt 1 ] || fail "all scores equal ($scores): fallback-like"
! grep -qx '0' <<<"$scores" || fail "a score of exactly 0 (the zero-weight fallback's): $scores"
by_prio=$(sort -k2,2nr <<<"$snap" | awk '{print $1}' | paste -sd' ')
by_score=$(sort -k3,3gr -k1,1n <<<"$snap" | awk '{print $1}' | paste -sd' ')
[ "$by_prio" = "$by_score" ] || fail "priorities ($by_prio) do not follow the scores ($by_score)"
for x in "${js[@]}"; do
  [[ "$(explanation "$x")" == *" by $agent with the placement agent's message; "* ]] \
    || fail "job $x scored without the placement agent's message: $(explanation "$x")"
  # why it waits: the network's share of its score, the GPUs it asks for
  [[ "$(explanation "$x")" =~ \ by\ .*\;\ learned\ part\ [0-9]+%\ of\ the\ score,\ prior\ [0-9]+%\;\ waits\ for\ [1-4]\ GPUs? ]] \
    || fail "job $x: no learned share or GPUs it waits for: $(explanation "$x")"
done
note "pending: $(explanation "${js[0]}")"
timeout 10 scancel "$blocker"
wait_state 40 COMPLETED "${js[@]}"
for x in "${js[@]}"; do
  [[ "$(explanation "$x")" == *"; nodes node"*": $agent: best node"*", ordering agent's message used)"* ]] \
    || fail "job $x placed without the ordering agent's message: $(explanation "$x")"
done
note "explanation: $(explanation "${js[0]}")"
ctld_alive || fail "slurmctld died"
# both agents infer in plain C++ (duet-model(5)): no LibTorch in slurmctld
read -r ctld _ < "$CLUSTER_DIR/pids/slurmctld.pid"
grep -q 'libduet_channel' "/proc/$ctld/maps" || fail "slurmctld $ctld has not mapped the plugins' channel (wrong process?)"
! grep -q 'libtorch' "/proc/$ctld/maps" || fail "slurmctld loaded LibTorch: $(grep -o '/[^ ]*libtorch[^ ]*' "/proc/$ctld/maps" | sort -u | head -3)"
note "slurmctld: no LibTorch mapped, $(grep VmRSS "/proc/$ctld/status")"
echo "PASS: learned agents loaded ($agent); placement on the agent's best node ($best); learned state kept over a restart; priorities follow the network's scores; messages exchanged both ways; no LibTorch in slurmctld"
