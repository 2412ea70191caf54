#!/usr/bin/env bash
# select/duet with the prefer-fast ranker: whole-node GPU jobs fill the nodes
# fastest first (cons_tres alone would take node1 first), the slowest node
# only when the faster ones are busy; 1-GPU jobs pack onto the fastest node
# with room; the explanation names the nodes and why.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins

# node1 slowest, node2 fastest, then node4, node3
duet_cluster_up --nodes 4 --mix v100:4 --speeds 0.5,1.0,0.7,0.9
write_duet_conf Scorer=small-first Ranker=prefer-fast "NodeSpeedsFile=$CLUSTER_DIR/nodes.csv"
grep -q 'select/duet: ranker prefer-fast' "$CTLD_LOG" || fail "prefer-fast not active"

# one at a time, so each sees the others' nodes busy: every job runs until
# it is cancelled (a job that ended on its own on a slow host would free its
# node for the next one)
jobs=()
for i in 1 2 3 4; do
  j=$(sbatch --parsable -o /dev/null --gres=gpu:4 --wrap 'sleep 300') || fail sbatch
  wait_state 20 RUNNING "$j"
  jobs+=("$j")
done
got=$(for j in "${jobs[@]}"; do field "$j" NodeList; done | paste -sd' ')
note "4-GPU jobs landed on: $got"
[ "$got" = "node2 node4 node3 node1" ] || fail "expected fastest first (node2 node4 node3 node1), got $got"
e=$(explanation "${jobs[0]}")
note "explanation: $e"
[[ "$e" == *"; nodes node2: prefer-fast"* ]] || fail "explanation of ${jobs[0]}: $e"

# free node3 (0.7) and node2 (1.0): two 1-GPU jobs both go to node2
timeout 10 scancel "${jobs[0]}" "${jobs[2]}"
wait_state 20 CANCELLED "${jobs[0]}" "${jobs[2]}"
wait_idle 20 node2 node3
a=$(sbatch --parsable -o /dev/null --gres=gpu:1 --wrap 'sleep 300')
b=$(sbatch --parsable -o /dev/null --gres=gpu:1 --wrap 'sleep 300')
wait_state 20 RUNNING "$a" "$b"
[ "$(field "$a" NodeList) $(field "$b" NodeList)" = "node2 node2" ] \
  || fail "1-GPU jobs on $(field "$a" NodeList) $(field "$b" NodeList), expected node2 node2"
timeout 10 scancel "${jobs[@]}" "$a" "$b" 2>/dev/null || true
echo "PASS: placement follows prefer-fast (node2 node4 node3 node1; 1-GPU jobs packed on node2)"
