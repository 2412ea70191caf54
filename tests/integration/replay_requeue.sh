#!/usr/bin/env bash
# A replayed job that is requeued mid-run (as duet's Preemption=requeue does)
# resumes where it stopped, and duet report counts it once: on a 2-node test
# cluster whose launch credentials expire in 5 s (so a requeued job may start
# again soon), `duet replay --requeue` submits 3 jobs; the long one is
# requeued with `scontrol requeue` once it has saved a checkpoint.
#  - its second run resumes from where it was stopped (no more work left
#    than its checkpoint said, plus the restart overhead) and completes;
#  - sacct -D has both runs; duet report --sacct counts 3 jobs, 1 preemption,
#    and the long job's JCT from its first submit (a requeue resets Submit).
. "$(dirname "$0")/lib.sh"
require_cluster_tools
require_duet emujob

cluster_up --nodes 2 --mix v100:4 --cred-expire 5
grep -q '^AuthInfo=.*,cred_expire=5$' "$SLURM_CONF" || fail "--cred-expire 5 not in slurm.conf: $(grep AuthInfo "$SLURM_CONF")"
work="$CLUSTER_DIR/work"; mkdir -p "$work"
# scale 60: the long job has 1800 trace s of work, 30 s alone on a V100 node;
# it saves a checkpoint every 10 s
printf 'job_id,submit,duration,num_gpus,gpu_type\n1,0,1800,1,\n2,1,60,1,\n3,2,60,2,\n' > "$work/trace.csv"
"$DUET" replay --trace "$work/trace.csv" --scale 60 --partition gpu --out "$work/jobs.csv" --requeue --no-wait \
  --job-output "$work/%j.out" 2>/dev/null || fail "duet replay --requeue failed"
grep -q '^#.* requeue=1' "$work/jobs.csv" || fail "the job-id file does not record --requeue: $(head -1 "$work/jobs.csv")"
ids=$(grep -v '^#\|^job_id' "$work/jobs.csv" | cut -d, -f1)
long=$(sed -n 's/^\([0-9]*\),1,.*/\1/p' "$work/jobs.csv")
[ -n "$long" ] && [ "$(wc -w <<<"$ids")" = 3 ] || fail "job-id file: $(cat "$work/jobs.csv")"
[ "$(scontrol show job "$long" | grep -o 'Requeue=[0-9]')" = Requeue=1 ] || fail "job $long not submitted --requeue"

# requeue it once it has saved a checkpoint (after 10 of its 30 s)
ckpt="$CLUSTER_DIR/emujob/.checkpoints/$long"
for i in $(seq 600); do [ -s "$ckpt" ] && break; sleep 0.1; done
[ -s "$ckpt" ] || fail "job $long saved no checkpoint in 60 s: $(squeue -j "$long")"
saved=$(awk '$1 == "work_left" { print $2 }' "$ckpt")
scontrol requeue "$long" || fail "scontrol requeue $long"
wait_jobs_done 120 $ids
[ "$(scontrol show job "$long" | grep -o 'Restarts=[0-9]*')" = Restarts=1 ] || fail "job $long: $(scontrol show job "$long" | grep -o 'Restarts=[0-9]*')"
out=$(cat "$work/$long.out")
note "second run of $long: $out"
left=$(sed -n 's/.*(restart 1: resumed with \([0-9.]*\) s left, restart overhead included).*/\1/p' <<<"$out")
[ -n "$left" ] || fail "job $long did not resume from a checkpoint: $out"
note "checkpoint before the requeue: $saved s left"
awk -v l="$left" -v s="$saved" 'BEGIN { exit !(s < 1800 && l >= 30 && l <= s + 30 + 0.1) }' \
  || fail "job $long resumed with $left s left; its checkpoint said $saved (want 30..$saved + 30)"
[ -z "$(ls -A "$CLUSTER_DIR/emujob/.checkpoints" 2>/dev/null)" ] || fail "checkpoints left: $(ls "$CLUSTER_DIR/emujob/.checkpoints")"

# accounting: both runs; the report counts the job once from its first submit
for i in $(seq 100); do
  runs=$(sacct -X -D -n -P -j "$long" --format=State | paste -sd,)
  [[ "$runs" == *,COMPLETED ]] && break
  sleep 0.2
done
note "sacct -D of $long: $runs"
[[ "$runs" == REQUEUED,COMPLETED ]] || fail "sacct -D of $long: $runs (want REQUEUED,COMPLETED)"
"$DUET" report --sacct --jobs "$work/jobs.csv" --out "$work/report" --no-plots >/dev/null 2>"$work/report.err" \
  || fail "duet report failed: $(cat "$work/report.err")"
grep -q "(0 not COMPLETED, 1 requeued)" "$work/report.err" || fail "duet report's line: $(cat "$work/report.err")"
# by hand: per job, its earliest Submit to its latest End, times the scale
want=$(sacct -X -D -n -P -j "$(paste -sd, <<<"$ids")" --format=JobID,Submit,End | while IFS='|' read -r j s e; do
  echo "$j $(date -d "$s" +%s) $(date -d "$e" +%s)"; done \
  | awk '{ if (!($1 in s) || $2 < s[$1]) s[$1] = $2; if ($3 > e[$1]) e[$1] = $3 }
         END { for (j in s) { t += e[j] - s[j]; n++ }; printf "%d %.6f", n, 60 * t / n }')
got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r["jobs"], "%.6f" % r["avg_jct_s"], r["preemptions"])' "$work/report/summary.json")
note "report: jobs, mean JCT (trace s), preemptions = $got; from sacct -D: $want"
[ "$got" = "$want 1" ] || fail "report ($got) disagrees with sacct -D ($want, 1 preemption)"
echo "PASS: a requeued replay job resumed with $left s of its 1800 s left; the report counts it once from its first submit"
