#!/usr/bin/env bash
# duet convert sacct / slurm-nodes on the test cluster's own history: GPU
# jobs of known work run as duet-emujob on nodes of known speeds (node2 at
# half speed); sacct's record and scontrol's node list convert to a trace and
# a cluster whose jobs, GPU counts and types match what ran, with run times
# normalised by node speed (the job on the slow node comes out as long as the
# same job on the fast one, within sacct's one-second resolution); a
# CPU-only job, a job cancelled before it started and the job steps are left
# out and counted; duet sim and duet eval run on the pair, and the shipped
# model fine-tunes on it (duet train --init).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_cluster_tools
require_duet emujob

cluster_up --nodes 3 --mix v100:4,v100:4,k80:4 --speeds 1.0,0.5,1.0
work="$CLUSTER_DIR/work"; mkdir -p "$work"
since=$(date +%Y-%m-%dT%H:%M:%S -d '-1 minute')

# 60 s of work at scale 10: 6 s on node1 (V100, speed 1), 12 s on node2 (speed 0.5)
t="ResNet-50 (batch size 32)"
emu() { echo "exec '$EMUJOB' --work $1 --scale 10 --job-type '$t'"; }
a=$(sbatch --parsable -w node1 --gres=gpu:v100:2 -o "$work/a.out" --wrap "$(emu 60)")
b=$(sbatch --parsable -w node2 --gres=gpu:1 -o "$work/b.out" --wrap "$(emu 60)")
c=$(sbatch --parsable -w node3 --gres=gpu:k80:2 -o "$work/c.out" --wrap "$(emu 5)")
cpu=$(sbatch --parsable -w node1 -o /dev/null --wrap true)
# all of node1's GPUs while job a holds two: pending until cancelled
wait_state 20 RUNNING "$a"
never=$(sbatch --parsable -w node1 --gres=gpu:v100:4 -o /dev/null --wrap true)
scancel "$never"
wait_jobs_done 60 "$a" "$b" "$c" "$cpu" "$never"
for j in a b c; do grep -q 'measured rate' "$work/$j.out" || fail "job $j printed no rate: $(cat "$work/$j.out")"; done

# without -X: the batch steps are there to be left out
fmt=JobIDRaw,JobID,User,Account,Partition,Submit,Start,End,State,AllocTRES,ReqTRES,NodeList
sacct -a -D -P -S "$since" -E now --format=$fmt > "$work/sacct.txt"
"$EMUJOB" --known-speeds > "$work/known.csv" || fail "duet-emujob --known-speeds failed"
"$DUET" convert sacct "$work/sacct.txt" --node-speeds "$work/known.csv" -o "$work/trace.csv" 2> "$work/convert.err" \
  || fail "duet convert sacct failed: $(cat "$work/convert.err")"
note "$(cat "$work/convert.err")"
grep -q ': 3 GPU jobs; left out: [1-9][0-9]* job steps, 1 never ran, 0 not finished, 1 CPU-only' "$work/convert.err" \
  || fail "unexpected counts: $(cat "$work/convert.err")"

scontrol show nodes --oneliner | "$DUET" convert slurm-nodes --node-speeds "$work/known.csv" \
  --speeds-out "$work/speeds.csv" -o "$work/cluster.csv" 2> "$work/nodes.err" \
  || fail "duet convert slurm-nodes failed: $(cat "$work/nodes.err")"
note "$(cat "$work/nodes.err")"
want_cluster=$'machine,gpu_type,num_gpus,rack,speed\nnode1,V100,4,,\nnode2,V100,4,,\nnode3,K80,4,,'
[ "$(cat "$work/cluster.csv")" = "$want_cluster" ] || fail "cluster: $(cat "$work/cluster.csv")"
# without measured speeds, each node gets its GPU type's from Gavel's table
# (V100 1, K80 below): none is left at 1 unread ("3 typical (1)" before)
scontrol show nodes --oneliner | "$DUET" convert slurm-nodes --speeds-out "$work/typed.csv" \
  -o "$work/typed-cluster.csv" 2> "$work/typed.err" || fail "duet convert slurm-nodes: $(cat "$work/typed.err")"
grep -qF 'speeds: 0 from --node-speeds, 0 from speed_X features, 3 from GPU types, 0 typical (1)' "$work/typed.err" \
  || fail "node speeds not from the GPU types: $(cat "$work/typed.err")"
awk -F, 'NR > 1 { s[$1] = $4 } END { exit !(s["node1"] == 1 && s["node2"] == 1 && s["node3"] > 0 && s["node3"] < 1) }' \
  "$work/typed.csv" || fail "speeds by GPU type: $(cat "$work/typed.csv")"
# the speeds it writes give the same trace again
"$DUET" convert sacct - --node-speeds "$work/speeds.csv" -o "$work/trace2.csv" < "$work/sacct.txt" 2>/dev/null \
  || fail "duet convert sacct from stdin failed"
cmp -s "$work/trace.csv" "$work/trace2.csv" || fail "speeds-out gave another trace: $(diff "$work/trace.csv" "$work/trace2.csv")"

# jobs, GPUs and types as run; durations = (End - Start) x the node's known
# speed, and the two V100 jobs normalise to the same 6 s of work although one
# ran twice as long
python3 - "$work" "$a" "$b" "$c" <<'PY' || fail "trace does not match what ran: $(cat "$work/trace.csv")"
import csv, sys, datetime
work, a, b, c = sys.argv[1:]
trace = {r["job_id"]: r for r in csv.DictReader(open(work + "/trace.csv"))}
speeds = {r["node"]: float(r["speed"]) for r in csv.DictReader(open(work + "/known.csv"))}
acct = {r["JobIDRaw"]: r for r in csv.DictReader(open(work + "/sacct.txt"), delimiter="|")}
t = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").timestamp()
ok = sorted(trace) == sorted([a, b, c])
want = {a: (2, "V100"), b: (1, "V100"), c: (2, "K80")}
for j, (g, ty) in want.items():
    r = trace.get(j)
    if not r: continue
    el = t(acct[j]["End"]) - t(acct[j]["Start"])
    d = float(r["duration"])
    print("# job %s: %s GPUs %s, ran %d s on %s, duration %.3f s" % (j, r["num_gpus"], r["gpu_type"], el, acct[j]["NodeList"], d))
    ok &= int(r["num_gpus"]) == g and r["gpu_type"] == ty and abs(d - el * speeds[acct[j]["NodeList"]]) < 1e-6
ok &= abs(float(trace[a]["duration"]) - 6) <= 1.5 and abs(float(trace[b]["duration"]) - 6) <= 1.5
ok &= float(trace[a]["submit"]) == 0 and trace[a]["user"] == "root"
sys.exit(0 if ok else 1)
PY

"$DUET" sim --trace "$work/trace.csv" --cluster "$work/cluster.csv" --order fifo --place first-fit --json \
  > "$work/sim.json" || fail "duet sim on the converted pair failed"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["jobs"] == 3 else 1)' "$work/sim.json" \
  || fail "duet sim: $(cat "$work/sim.json")"
"$DUET" eval --trace "$work/trace.csv" --cluster "$work/cluster.csv" --policies multifactor/first-fit,duet/duet --model "$top_srcdir/models/duet.model" \
  --out "$work/eval" --no-plots >/dev/null || fail "duet eval on the converted pair failed"
[ -s "$work/eval/summary.md" ] || fail "duet eval wrote no summary"
# the shipped model fine-tuned on this history (a tiny run), then evaluated
"$DUET" train --trace "$work/trace.csv" --cluster "$work/cluster.csv" --out "$work/site.duet" \
  --init "$top_srcdir/models/duet.model" --episodes 1 --eval-every 1 > "$work/train.out" 2>&1 \
  || fail "duet train --init failed: $(cat "$work/train.out")"
"$DUET" model info "$work/site.duet" | grep -q -- '--init' || fail "the fine-tuned model does not record --init"
"$DUET" eval --trace "$work/trace.csv" --cluster "$work/cluster.csv" --policies multifactor/first-fit,duet/duet \
  --model "$work/site.duet" --out "$work/eval-tuned" --no-plots >/dev/null || fail "duet eval of the fine-tuned model failed"
echo "PASS: sacct -> trace (3 GPU jobs, types and speed-normalised durations as run), scontrol -> cluster, sim, eval and fine-tuning run"
