#!/usr/bin/env bash
# duet replay + duet report --sacct on a real 4-node test cluster: a tiny
# trace slice replayed as duet-emujob jobs, the report's JCTs agree with the
# sacct times, and an emujob on a node of speed 0.5 runs at half the rate of
# one on a node of speed 1.0 (and takes at least twice as long).
. "$(dirname "$0")/lib.sh"
require_cluster_tools
require_duet emujob

cluster_up --nodes 4 --mix v100:4,v100:4,k80:4,p100:4 --speeds 1.0,0.5,1.0,1.0
work="$CLUSTER_DIR/work"; mkdir -p "$work"

# speed: the same job alone on node1 (1.0) and node2 (0.5), 30 s of work at scale 10
t="ResNet-50 (batch size 32)"
a=$(sbatch --parsable -w node1 --gres=gpu:1 -o "$work/fast.out" --wrap "exec '$EMUJOB' --work 30 --scale 10 --job-type '$t'")
b=$(sbatch --parsable -w node2 --gres=gpu:1 -o "$work/slow.out" --wrap "exec '$EMUJOB' --work 30 --scale 10 --job-type '$t'")
wait_jobs_done 30 "$a" "$b"
fast=$(sed -n 's/.*: \([0-9.]*\) s wall.*/\1/p' "$work/fast.out"); slow=$(sed -n 's/.*: \([0-9.]*\) s wall.*/\1/p' "$work/slow.out")
# the rate each job's model gave it (its line's "model MIN..MAX"): what the
# node's speed decides, whatever the host's load adds to the wall time
fmodel=$(sed -n 's/.*(model \([0-9.]*\)\.\.\([0-9.]*\),.*/\1 \2/p' "$work/fast.out")
smodel=$(sed -n 's/.*(model \([0-9.]*\)\.\.\([0-9.]*\),.*/\1 \2/p' "$work/slow.out")
note "emujob: node1 (speed 1.0) ${fast} s wall, model rate $fmodel; node2 (speed 0.5) ${slow} s wall, model rate $smodel"
[ -n "$fast" ] && [ -n "$slow" ] && [ -n "$fmodel" ] && [ -n "$smodel" ] \
  || fail "no rate line: $(cat "$work/fast.out" "$work/slow.out")"
# half the rate on the slow node, and neither job ended before its work at
# that rate could be done (30 s at scale 10: 3 s at rate 1); no upper bound,
# since a loaded host only adds time (wait_jobs_done bounds the wait)
awk -v f="$fast" -v s="$slow" -v fm="$fmodel" -v sm="$smodel" 'BEGIN {
  split(fm, a, " "); split(sm, b, " ")
  exit !(b[1] / a[1] > 0.49 && b[1] / a[1] < 0.51 && b[2] / a[2] > 0.49 && b[2] / a[2] < 0.51 &&
         f >= 3 / a[2] - 0.01 && s >= 3 / b[2] - 0.01) }' \
  || fail "expected half the model rate on the slow node and no job done early: $fast s at $fmodel, $slow s at $smodel"

# replay: 10 jobs (1, 2, 4 and 8 GPUs; one typed) over 20 trace seconds at scale 10
{
  echo "job_id,submit,duration,num_gpus,gpu_type"
  echo "1,0,20,1,"; echo "2,2,10,2,"; echo "3,4,30,4,"; echo "4,6,10,1,V100"; echo "5,8,20,8,"
  echo "6,10,10,1,"; echo "7,12,20,2,"; echo "8,14,10,4,K80"; echo "9,16,20,1,"; echo "10,20,10,1,"
} > "$work/trace.csv"
"$DUET" replay --trace "$work/trace.csv" --scale 10 --partition gpu --out "$work/jobs.csv" --wait-timeout 40 \
  --job-output "$work/%j.out" || fail "duet replay failed"
[ "$(grep -vc '^#\|^job_id' "$work/jobs.csv")" = 10 ] || fail "expected 10 job ids in $work/jobs.csv: $(cat "$work/jobs.csv")"
ids=$(grep -v '^#\|^job_id' "$work/jobs.csv" | cut -d, -f1 | paste -sd,)
wait_jobs_done 20 ${ids//,/ }
grep -q 'measured rate' "$work/$(cut -d, -f1 <<< "${ids}").out" || fail "emujob printed no rate"
nodes_of_8=$(sacct -X -n -P -j "$(sed -n 's/^\([0-9]*\),5,.*/\1/p' "$work/jobs.csv")" --format=NodeList)
note "the 8-GPU job ran on $nodes_of_8"
"$DUET" report --sacct --jobs "$work/jobs.csv" --out "$work/report" --no-plots >/dev/null || fail "duet report failed"
# mean JCT from sacct by hand, times the scale
want=$(sacct -X -n -P -j "$ids" --format=Submit,End | while IFS='|' read -r s e; do
  echo $(( $(date -d "$e" +%s) - $(date -d "$s" +%s) )); done | awk '{ t += $1; n++ } END { printf "%.6f", 10 * t / n }')
got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r["jobs"], "%.6f" % r["avg_jct_s"])' "$work/report/summary.json")
note "report: jobs and mean JCT (trace s) = $got; from sacct: $want"
[ "$got" = "10 $want" ] || fail "report ($got) disagrees with sacct (10 $want)"
grep -q '| mean JCT' "$work/report/summary.md" || grep -q 'mean JCT' "$work/report/summary.md" || fail "no summary table"
"$DUET" report "$work/report" "$work/report" | grep -q '| mean JCT (h) |' || fail "duet report A B printed no table"
# A report says it was measured, and names the run after the plugins its
# job-id file recorded at replay time, not after today's configuration.
grep -q '^# duet report' "$work/report/summary.md" && grep -q 'Measured on a Slurm cluster' "$work/report/summary.md" \
  || fail "the report calls itself a simulation: $(head -3 "$work/report/summary.md")"
grep -q '^#.* priority=priority/[a-z]* .*select=select/[a-z_]*' "$work/jobs.csv" \
  || fail "the job-id file records no plugins: $(head -1 "$work/jobs.csv")"
sed -i '1s|priority=[^ ]*|priority=priority/earlier|; 1s|select=[^ ]*|select=select/earlier|' "$work/jobs.csv"
"$DUET" report --sacct --jobs "$work/jobs.csv" --out "$work/report2" --no-plots >/dev/null || fail "duet report failed"
named=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r["ordering"] + "/" + r["placement"])' "$work/report2/summary.json")
[ "$named" = "priority/earlier/select/earlier" ] || fail "run named $named, not after its recorded plugins"
note "run named after its record: $named"
echo "PASS: replay of 10 jobs, report JCTs = sacct, slow node ${slow} s vs fast ${fast} s"
