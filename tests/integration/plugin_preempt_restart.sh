#!/usr/bin/env bash
# A preempted job's earlier service survives a slurmctld restart, even a
# SIGKILL (duet.conf(5), PREEMPTION), with site_factor/duet (or the plugin
# PREEMPT_PLUGIN names: plugin_preempt_restart_priority.sh runs this with
# priority/duet, whose file is duet_preempt_state.priority_duet) and an
# untrained preemptive model, which orders like Tiresias' LAS
# (duet-model(5)): a job that has had 3,250 GPU-seconds or more is in a
# lower queue.
#  - a requeue-able whole-node job (256 GPUs) passes 3,250 GPU-seconds and
#    is preempted for short jobs; the state file in StateSaveLocation names
#    it with its service at once;
#  - pending again, it scores well below a fresh twin (same request, no
#    service): its earlier service is in its features;
#  - slurmctld is killed (SIGKILL) and started again: the plugin logs that
#    it restored the job's service, and the job still scores well below its
#    twin (without the state file both would be new: scores close);
#  - once the job has completed, a re-score drops it from the file;
#  - a garbage file, and one writable by others, are ignored with one error
#    line each and slurmctld runs on.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
duet=${DUET:-$top_builddir/duet}
[ -x "$duet" ] || skip "duet not built in $top_builddir"

G=256  # GPUs of the node: the whole-node job passes 3,250 GPU-seconds in 13 s
S=128  # GPUs of each short job
case ${PREEMPT_PLUGIN:=site_factor/duet} in
  site_factor/duet) site_factor_cluster_up --nodes 1 --mix v100:$G --set PrioritySiteFactorParameters=weight=10000 ;;
  priority/duet) duet_cluster_up --nodes 1 --mix v100:$G ;;
  *) fail "PREEMPT_PLUGIN=$PREEMPT_PLUGIN: not an ordering plugin" ;;
esac
[ "$ORDER_PLUGIN" = "$PREEMPT_PLUGIN" ] || fail "cluster runs $ORDER_PLUGIN, not $PREEMPT_PLUGIN"
STATE="$CLUSTER_DIR/state/duet_preempt_state.${ORDER_PLUGIN//\//_}"
# the preempted job starts again once its run's launch credential has
# expired (120 s by default); slurmctld reads AuthInfo at start only
sed -i 's|^AuthInfo=\(.*\)$|AuthInfo=\1,cred_expire=5|' "$SLURM_CONF"
restart_ctld

model="$CLUSTER_DIR/etc/duet.model"
"$duet" model init --preemptive --out "$model" --seed 7 >/dev/null || fail "duet model init --preemptive"
conf=(Scorer=model "ModelPath=$model" Ranker=none RescoreInterval=1 LogLevel=debug Preemption=requeue)
write_duet_conf "${conf[@]}" PreemptMinRunTime=2

release="$CLUSTER_DIR/release"
hold="while [ ! -e '$release' ]; do sleep 0.2; done"
submitted=$(date +%s)
long=$(sbatch --parsable -o /dev/null --requeue --gres=gpu:$G --wrap "$hold") || fail "sbatch --requeue"
wait_state 30 RUNNING "$long"
short=()
for i in 1 2 3; do short+=("$(sbatch --parsable -o /dev/null --gres=gpu:$S --wrap "$hold")") || fail "sbatch"; done
for i in $(seq 600); do [ "$(field "$long" Restarts)" = 1 ] && break; sleep 0.2; done
[ "$(field "$long" Restarts)" = 1 ] || fail "job $long not preempted: $(field "$long" JobState)"
# on disk by the time the requeue is seen: job id, run s, GPU-s, preemptions,
# the start time of the run preempted
line=$(grep "^$long " "$STATE" 2>/dev/null) || fail "job $long not in $STATE: $(cat "$STATE" 2>&1)"
note "state file after the preemption: $(paste -sd'|' "$STATE")"
[ "$(head -n 1 "$STATE" | cut -d' ' -f1,2)" = "duet-preempt-state 2" ] || fail "$STATE's header: $(head -n 1 "$STATE")"
read -r _ run_s gpu_s count last_start extra <<<"$line"
[ "$count" = 1 ] && [ -z "$extra" ] && [ "$(echo "$gpu_s >= 3250 && $gpu_s == $run_s * $G" | bc)" = 1 ] \
  && [[ $last_start =~ ^[0-9]+$ ]] && [ "$last_start" -ge "$submitted" ] && [ "$last_start" -le "$(date +%s)" ] \
  || fail "job $long's line in $STATE: '$line'"
[ "$(stat -c %a "$STATE")" = 600 ] || fail "$STATE has mode $(stat -c %a "$STATE")"

# nothing else is preempted from here on; the twin asks what the job asks
write_duet_conf "${conf[@]}" PreemptMinRunTime=3600
touch "$CLUSTER_DIR/submitted"
twin=$(sbatch --parsable -o /dev/null --gres=gpu:$G --wrap "$hold") || fail "sbatch twin"
score() { explanation "$1" | sed -n 's/^duet: rank [0-9]*\/[0-9]* score \([-0-9.e+]*\) by .*/\1/p'; }
# the twin's score less the preempted job's, once both are ranked after log line $1
gap() {
  local i from=$1 a b
  for i in $(seq 150); do
    if [ "$(tail -n +"$((from + 1))" "$CTLD_LOG" | grep -c "$ORDER_PLUGIN: re-scored ")" -ge 2 ]; then
      a=$(score "$long"); b=$(score "$twin")
      [ -n "$a" ] && [ -n "$b" ] && { echo "$b - ($a)" | bc -l; return; }
    fi
    sleep 0.2
  done
  fail "jobs $long and $twin not ranked: '$(explanation "$long")' / '$(explanation "$twin")'"
}
# LAS's prior alone puts a job one queue lower by 3 * 0.88 * 4 = 10.6
MIN_GAP=5
before=$(gap "$(wc -l < "$CTLD_LOG")")
note "before the restart: $twin scores $before above $long"
[ "$(echo "$before >= $MIN_GAP" | bc)" = 1 ] || fail "the earlier service does not count before the restart: gap $before"

# SIGKILL once slurmctld has saved the requeue and the twin in its own state
# (its state thread writes job_state soon after a change); the plugin's
# file was written before
for i in $(seq 300); do [ "$CLUSTER_DIR/state/job_state" -nt "$CLUSTER_DIR/submitted" ] && break; sleep 0.1; done
[ "$CLUSTER_DIR/state/job_state" -nt "$CLUSTER_DIR/submitted" ] || fail "slurmctld did not save its job state"
read -r pid _ < "$CLUSTER_DIR/pids/slurmctld.pid" || fail "no slurmctld pid"
kill -KILL "$pid"
restart_ctld
wait_log_after "$CTLD_MARK" "$ORDER_PLUGIN: restored from $STATE the earlier service of 1 preempted job: JobId=$long \\(1x, " 15
note "$(tail -n +"$((CTLD_MARK + 1))" "$CTLD_LOG" | grep -o "$ORDER_PLUGIN: restored .*")"
[ "$(field "$long" JobState)" = PENDING ] && [ "$(field "$long" Restarts)" = 1 ] || fail "job $long after the restart"
after=$(gap "$CTLD_MARK")
note "after the restart: $twin scores $after above $long"
[ "$(echo "$after >= $MIN_GAP" | bc)" = 1 ] || fail "job $long's earlier service was lost over the restart: gap $after"
# priority/duet's scores are the jobs' priorities: the twin is ahead in Slurm's queue too
[ "$ORDER_PLUGIN" != priority/duet ] || wait_order 10 "$twin $long" "$twin" "$long"

# done: the next re-score forgets the job
touch "$release"
wait_state 120 COMPLETED "$long" "$twin" "${short[@]}"
for i in $(seq 300); do grep -q "^$long " "$STATE" || break; sleep 0.1; done
[ "$(cat "$STATE")" = "duet-preempt-state 2 0" ] || fail "$STATE after job $long completed: $(cat "$STATE")"
ctld_alive || fail "slurmctld died"
! tail -n +"$((CTLD_MARK + 1))" "$CTLD_LOG" | grep -E "error: $ORDER_PLUGIN" || fail "$ORDER_PLUGIN logged errors"

# hostile files: ignored, one line each, slurmctld runs on
printf '\033[2Jgarbage\n' > "$STATE"
restart_ctld
wait_log_after "$CTLD_MARK" "error: $ORDER_PLUGIN: ignoring $STATE: not a duet-preempt-state file \\(first line '\\\\x1b\\[2Jgarbage'\\); preempted jobs' earlier service starts empty" 15
printf 'duet-preempt-state 2 1\n%s 99999 99999 1 1\n' "$twin" > "$STATE"
chmod 666 "$STATE"
restart_ctld
wait_log_after "$CTLD_MARK" "error: $ORDER_PLUGIN: ignoring $STATE: the file is writable by others \\(mode 0666\\)" 15
ctld_alive || fail "slurmctld died"
echo "PASS ($ORDER_PLUGIN): job $long's earlier service ($gpu_s GPU-s) restored after a SIGKILL of slurmctld (twin scores $before above it before, $after after), dropped once it completed; damaged and open state files ignored"
