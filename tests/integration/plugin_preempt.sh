#!/usr/bin/env bash
# Preemption by requeue (duet.conf Preemption=requeue) with a preemptive model
# (`duet model init --preemptive`: untrained, it orders like Tiresias' LAS,
# duet-model(5) PREEMPTION) under site_factor/duet with select/duet (the
# recommended mode), on an accounting cluster:
#  - `duet check-config` passes and says it preempts by requeue;
#  - two long jobs fill both nodes (256 GPUs each), one requeue-able
#    (--requeue), one submitted --no-requeue; three short jobs of 128 GPUs
#    arrive and pend;
#  - once the long jobs have had more service than LAS's first queue holds
#    (3,250 GPU-seconds: 13 s on 256 GPUs), the model ranks the short jobs
#    first, and they leave no room for either long job: it would preempt
#    both. The requeue-able one is requeued for two of the short jobs
#    (Restarts=1, its run PREEMPTED in sacct, the preemption in its
#    explanation), the short jobs run on its node and it later runs again
#    and COMPLETES;
#  - the placement agent's observer does not learn from the requeued job;
#  - the --no-requeue job is never preempted: it keeps running (Restarts=0,
#    no preemption in its explanation), the plugin logs why it kept it, and
#    it completes when released.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
[ -f "$SITE_LIBS/site_factor_duet.so" ] || skip "site_factor/duet not built in $top_builddir"
duet=${DUET:-$top_builddir/duet}
[ -x "$duet" ] || skip "duet not built in $top_builddir"

G=256  # GPUs per node: a whole-node job passes 3,250 GPU-seconds in 13 s
S=128  # GPUs of each short job: three leave no room for a long job
ORDER_PLUGIN=site_factor/duet
cluster_up --nodes 2 --mix v100:$G --set "PluginDir=$SLURM_PLUGINDIR:$SITE_LIBS:$SELECT_LIBS" \
  --set PriorityType=priority/multifactor --set PrioritySiteFactorPlugin=site_factor/duet \
  --set PrioritySiteFactorParameters=weight=10000 --set SelectType=select/duet
CTLD_LOG="$CLUSTER_DIR/log/slurmctld.log"
DUET_CONF="$CLUSTER_DIR/etc/duet.conf"
# A requeued job may start again once its run's launch credential has
# expired (120 s by default); slurmctld reads AuthInfo at start only.
sed -i 's|^AuthInfo=\(.*\)$|AuthInfo=\1,cred_expire=5|' "$SLURM_CONF"
restart_ctld

model="$CLUSTER_DIR/etc/duet.model"
"$duet" model init --preemptive --out "$model" --seed 7 >/dev/null || fail "duet model init --preemptive"
crc=$(cksum < "$model" | cut -d' ' -f1)
agent="model(cksum $crc, format 2)"
before=$(wc -l < "$CTLD_LOG")
write_duet_conf Scorer=model "ModelPath=$model" Ranker=model "PlacementModelPath=$model" RescoreInterval=1 \
  LogLevel=debug Preemption=requeue PreemptMinRunTime=2 PreemptJobInterval=3600
wait_log_after "$before" "$ORDER_PLUGIN: scorer model\\(cksum $crc, format 2\\), re-score every 1 s, preempting by requeue" 15
mark=$(wc -l < "$CTLD_LOG")
out=$("$duet" check-config 2>&1) || fail "check-config: $out"
note "$out"
[[ "$out" == "ok: $DUET_CONF: ordering agent $model $agent, preempting by requeue; placement agent $model $agent; "* ]] \
  || fail "check-config: $out"

release="$CLUSTER_DIR/release"
# the requeue-able job: its first run waits to be preempted, a run after a
# requeue (SLURM_RESTART_COUNT) ends at once
long=$(sbatch --parsable -o /dev/null --requeue -w node1 --gres=gpu:$G \
  --wrap "[ \"\${SLURM_RESTART_COUNT:-0}\" -gt 0 ] && exit 0; while [ ! -e '$release' ]; do sleep 0.2; done") \
  || fail "sbatch --requeue"
pinned=$(sbatch --parsable -o /dev/null --no-requeue -w node2 --gres=gpu:$G \
  --wrap "while [ ! -e '$release' ]; do sleep 0.2; done") || fail "sbatch --no-requeue"
wait_state 30 RUNNING "$long" "$pinned"
short=()
for i in 1 2 3; do short+=("$(sbatch --parsable -o /dev/null --gres=gpu:$S --wrap 'sleep 1')") || fail "sbatch"; done
is_short() { [[ " ${short[*]} " == *" $1 "* ]]; }

# the preemption: the requeue-able job restarted once
for i in $(seq 600); do [ "$(field "$long" Restarts)" = 1 ] && break; sleep 0.2; done
[ "$(field "$long" Restarts)" = 1 ] || fail "job $long not preempted: $(field "$long" JobState), Restarts=$(field "$long" Restarts)"
e=$(explanation "$long")
note "preempted $long: $e"
[[ "$e" == *"; preempted 1x, last: requeued at "*" s, rank "*" of running and pending jobs by $agent"*", for jobs "* ]] \
  || fail "explanation of the preempted job $long: '$e'"
# for the two short jobs ranked first: the third does not fit beside them
for_jobs=$(sed -n 's/.*, for jobs \([0-9]*,[0-9]*\)\(;.*\)\{0,1\}$/\1/p' <<<"$e")
is_short "${for_jobs%,*}" && is_short "${for_jobs#*,}" && [ "${for_jobs%,*}" != "${for_jobs#*,}" ] \
  || fail "the preemption of $long does not name two short jobs (${short[*]}): '$e'"
grep -q "$ORDER_PLUGIN: preempted JobId=$long: requeued at " "$CTLD_LOG" || fail "preemption of $long not logged"

# the short jobs run in its place, then it runs again and completes
wait_state 60 COMPLETED "${short[@]}"
wait_state 60 COMPLETED "$long"
[ "$(field "$long" NodeList)" = node1 ] || fail "job $long ran again on $(field "$long" NodeList)"
# accounting: the run it was preempted in (with that run's placement), then
# the one that completed, both explained with the preemption
states() { { timeout 10 sacct -j "$1" -X -D -n -P -o State,SystemComment 2>/dev/null || true; }; }
for i in $(seq 150); do
  s=$(states "$long")
  [ "$(cut -d'|' -f1 <<<"$s" | paste -sd,)" = PREEMPTED,COMPLETED ] && [ "$(grep -c '; preempted 1x, last: ' <<<"$s")" = 2 ] && break
  sleep 0.2
done
note "sacct of $long: $(paste -sd';' <<<"$s")"
[ "$(cut -d'|' -f1 <<<"$s" | paste -sd,)" = PREEMPTED,COMPLETED ] || fail "sacct states of $long: $(paste -sd';' <<<"$s")"
[ "$(grep -c '; preempted 1x, last: ' <<<"$s")" = 2 ] || fail "sacct explanations of $long lack the preemption: $s"
grep -q '^PREEMPTED|.*; preempted 1x, last: .*; nodes node1: ' <<<"$s" || fail "the preempted run's placement is not in sacct: $s"
out=$("$duet" explain "$long") || fail "duet explain $long"
grep -qF "; preempted 1x, last: requeued at " <<<"$out" || fail "duet explain $long: $out"

# the placement agent's observer learns node speeds from whole runs only: not
# from the run after the requeue, which did what the first run left
grep "observer .* updated by JobId=" "$CTLD_LOG" | tail -3 | sed 's/^/# /'
! grep -q "observer .* updated by JobId=$long " "$CTLD_LOG" || fail "the observer learned from requeued job $long's runs"
grep -q "observer .* updated by JobId=${short[0]} " "$CTLD_LOG" || fail "the observer did not learn from short job ${short[0]}"

# the --no-requeue job: wanted out by the model, kept, never preempted
grep -q "$ORDER_PLUGIN: JobId=$pinned not preempted: not requeue-able" "$CTLD_LOG" \
  || fail "no log line saying why $pinned was kept"
[ "$(field "$pinned" JobState)" = RUNNING ] || fail "job $pinned: $(field "$pinned" JobState)"
[ "$(field "$pinned" Restarts)" = 0 ] || fail "job $pinned restarted"
[[ "$(explanation "$pinned")" != *preempted* ]] || fail "job $pinned: $(explanation "$pinned")"
! grep -q "preempted JobId=$pinned\b" "$CTLD_LOG" || fail "job $pinned preempted"
touch "$release"
wait_state 60 COMPLETED "$pinned"
for i in $(seq 150); do [ "$(states "$pinned" | cut -d'|' -f1 | paste -sd,)" = COMPLETED ] && break; sleep 0.2; done
[ "$(states "$pinned" | cut -d'|' -f1 | paste -sd,)" = COMPLETED ] || fail "sacct of $pinned: $(states "$pinned")"

ctld_alive || fail "slurmctld died"
! tail -n +"$((mark + 1))" "$CTLD_LOG" | grep -E "error: $ORDER_PLUGIN" || fail "$ORDER_PLUGIN logged errors"
echo "PASS: the preemptive model requeued the requeue-able job for the short ones (PREEMPTED then COMPLETED in sacct, explained) and never the --no-requeue one"
