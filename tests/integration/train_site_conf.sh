#!/usr/bin/env bash
# duet train --duet-conf trains for the mode the plugins run the model in:
# with Preemption=off the shipped (preemptive) model preempts nothing in the
# training simulator and its provenance says --no-preemption; with
# Preemption=requeue the same run preempts. Progress lines (episode,
# reward, validation ratio, ETA) come out on a file, not only a terminal.
# --duet-conf with a --preempt-* option, and a broken duet.conf, are refused.
. "$(dirname "$0")/lib.sh"
require_duet
T=$(mktemp -d "${TMPDIR:-/tmp}/duet-train-conf.XXXXXX")
trap 'rm -rf "$T"' EXIT

# 40 jobs on 8 GPUs: long 4-GPU jobs among short 1-GPU ones, arriving together
{ echo "job_id,submit,duration,num_gpus,user"
  for i in $(seq 0 39); do
    if [ $((i % 4)) = 0 ]; then echo "$((i + 1)),$((i * 60)),7200,4,bob"
    else echo "$((i + 1)),$((i * 60)),$((300 + 10 * (i % 7))),1,ann"; fi
  done; } > "$T/trace.csv"
printf 'machine,gpu_type,num_gpus,rack\nm0,V100,4,r0\nm1,V100,4,r0\n' > "$T/cluster.csv"
printf 'Scorer=model\nPreemption=off\n' > "$T/off.conf"
printf 'Scorer=model\nPreemption=requeue\nPreemptMinRunTime=0\nPreemptJobInterval=0\n' > "$T/requeue.conf"

train() {  # train NAME ARGS...: stdout to NAME.out, stderr to NAME.err
  local name=$1; shift
  "$DUET" train --trace "$T/trace.csv" --cluster "$T/cluster.csv" --init "$top_srcdir/models/duet.model" \
    --episodes 3 --eval-every 1 -o "$T/$name.duet" "$@" > "$T/$name.out" 2> "$T/$name.err"
}
# preemptions NAME: the preemptions of every episode line, one a line
preemptions() { sed -n 's/.* \([0-9]*\) preemptions\{0,1\},.*/\1/p' "$T/$1.err"; }

"$DUET" model info "$top_srcdir/models/duet.model" | grep -q '^preemptive   yes' \
  || skip "the shipped model is not preemptive: nothing to turn off"
train off --duet-conf "$T/off.conf" || fail "duet train --duet-conf (Preemption=off): $(cat "$T/off.err")"
note "$(cat "$T/off.err")"
# the first and the last episode at least, each with all it reports
grep -qE '^duet train: ppo 1/3 \(run 1/3\): reward -[0-9.]+ job-h, rollout JCT [0-9]+ s, [0-9]+ preemptions?, validation [0-9.]+x the start \([0-9]+ s\), [0-9hms]+, ETA [0-9hms]+$' \
  "$T/off.err" || fail "no progress line for episode 1 on a file: $(cat "$T/off.err")"
grep -qE '^duet train: ppo 3/3 \(run 3/3\): ' "$T/off.err" || fail "no line for the last episode: $(cat "$T/off.err")"
[ -n "$(preemptions off)" ] && [ -z "$(preemptions off | grep -vx 0)" ] \
  || fail "Preemption=off, yet the training simulator preempted: $(cat "$T/off.err")"
"$DUET" model info "$T/off.duet" | grep -q -- '--no-preemption' || fail "provenance without --no-preemption"

train requeue --duet-conf "$T/requeue.conf" || fail "duet train --duet-conf (Preemption=requeue): $(cat "$T/requeue.err")"
[ -n "$(preemptions requeue | grep -vx 0)" ] || fail "Preemption=requeue preempted nothing: $(cat "$T/requeue.err")"
"$DUET" model info "$T/requeue.duet" | grep -q -- '--no-preemption' && fail "requeue model says --no-preemption"

rc=0; train both --duet-conf "$T/off.conf" --preempt-max-restarts 2 || rc=$?
[ "$rc" = 2 ] || fail "--duet-conf with --preempt-max-restarts: exit $rc: $(cat "$T/both.err")"
printf 'Preemption=sometimes\n' > "$T/bad.conf"
rc=0; train bad --duet-conf "$T/bad.conf" || rc=$?
[ "$rc" != 0 ] && grep -qF "$T/bad.conf:1:" "$T/bad.err" || fail "a bad duet.conf: exit $rc: $(cat "$T/bad.err")"
echo "PASS: duet train --duet-conf: Preemption=off preempts nothing (requeue does), progress lines on a file"
