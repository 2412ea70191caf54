#!/usr/bin/env bash
# The test cluster is a real Slurm cluster: typed and untyped GPU jobs run,
# sacct records them with gres/gpu in AllocTRES, and `down` leaves nothing.
. "$(dirname "$0")/lib.sh"
require_cluster_tools

cluster_up --nodes 3 --mix v100:4,p100:4,k80:4
out=$CLUSTER_DIR/out; mkdir -p "$out"

typed=$(sbatch --parsable -o "$out/%j.out" --gres=gpu:v100:2 --wrap 'echo "CVD=$CUDA_VISIBLE_DEVICES"; sleep 1')
untyped=$(sbatch --parsable -o "$out/%j.out" --gres=gpu:2 --wrap 'echo "CVD=$CUDA_VISIBLE_DEVICES"; sleep 1')
k80=$(sbatch --parsable -o "$out/%j.out" --gres=gpu:k80:4 --wrap 'echo "CVD=$CUDA_VISIBLE_DEVICES"')
wait_jobs_done 60 "$typed" "$untyped" "$k80"

row() { timeout 10 sacct -X -n -P -j "$1" --format=JobID,Submit,Start,End,NodeList,AllocTRES,State; }
for j in "$typed" "$untyped" "$k80"; do note "sacct: $(row "$j")"; done

r=$(row "$typed")
[[ "$r" == *"|COMPLETED" ]] || fail "typed job not COMPLETED: $r"
[[ "$r" == *"gres/gpu:v100=2"* && "$r" == *"gres/gpu=2"* ]] || fail "typed job AllocTRES lacks 2 v100: $r"
[ "$(echo "$r" | cut -d'|' -f5)" = node1 ] || fail "typed v100 job not on node1 (the only v100 node): $r"

r=$(row "$untyped")
[[ "$r" == *"|COMPLETED" ]] || fail "untyped job not COMPLETED: $r"
[[ "$r" == *"gres/gpu=2"* ]] || fail "untyped job AllocTRES lacks gres/gpu=2: $r"
[[ "$(echo "$r" | cut -d'|' -f5)" =~ ^node[123]$ ]] || fail "untyped job NodeList: $r"

r=$(row "$k80")
[[ "$r" == *"gres/gpu:k80=4"* ]] || fail "k80 job AllocTRES: $r"
[ "$(echo "$r" | cut -d'|' -f5)" = node3 ] || fail "k80 job not on node3: $r"

# Submit, Start and End are real timestamps
for j in "$typed" "$untyped"; do
  r=$(row "$j")
  for f in 2 3 4; do
    [[ "$(echo "$r" | cut -d'|' -f$f)" =~ ^20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T ]] || fail "field $f not a time: $r"
  done
done

# exactly the GPUs asked, as device indices
grep -qx 'CVD=0,1' "$out/$typed.out" || fail "typed job CUDA_VISIBLE_DEVICES: $(cat "$out/$typed.out")"
[ "$(sed -n 's/^CVD=//p' "$out/$untyped.out" | tr ',' '\n' | wc -l)" = 2 ] || fail "untyped job got $(cat "$out/$untyped.out")"
grep -qx 'CVD=0,1,2,3' "$out/$k80.out" || fail "k80 job CUDA_VISIBLE_DEVICES: $(cat "$out/$k80.out")"

# a second cluster in parallel does not collide with the first
second=$(mktemp -d /tmp/duet-test.XXXXXX)
env2=$("$TESTCLUSTER" up --dir "$second" --nodes 1 --no-accounting) || { "$TESTCLUSTER" down --dir "$second"; fail "second cluster did not start"; }
( eval "$env2"; timeout 10 sinfo -h -o %D | grep -qx 1 ) || { "$TESTCLUSTER" down --dir "$second"; fail "second cluster not answering"; }
timeout 10 sinfo -h -N -o %N | grep -q node3 || fail "first cluster disturbed by the second"
# a daemon that crashes is reported by down (exit 3), never passed over
read -r sd _ < "$second/pids/slurmd-node1.pid"
kill -SEGV "$sd"
for i in $(seq 600); do grep -qs "^slurmd-node1 $sd " "$second/log/exits" && break; sleep 0.1; done
rc=0; msg=$("$TESTCLUSTER" down --dir "$second" 2>&1 >/dev/null) || rc=$?
[ $rc = 3 ] || fail "down after a slurmd crash: exit $rc, expected 3 ($msg)"
grep -q "slurmd-node1 (pid $sd) was killed by signal 11 (SIGSEGV)" <<<"$msg" || fail "down did not name the crash: $msg"
[ -z "$(live_daemons "$second")" ] || fail "second cluster left processes: $(live_daemons "$second")"
rm -rf "$second"

# down stops everything it started; a second down is harmless
"$TESTCLUSTER" down --dir "$CLUSTER_DIR" >/dev/null 2>&1 || fail "down failed"
left=$(live_daemons "$CLUSTER_DIR")
[ -z "$left" ] || fail "daemons left after down: $left"
"$TESTCLUSTER" down --dir "$CLUSTER_DIR" >/dev/null 2>&1 || fail "second down failed"
echo "PASS: typed/untyped GPU jobs in sacct, parallel clusters, clean down (up in ${CLUSTER_UP_S} s)"
