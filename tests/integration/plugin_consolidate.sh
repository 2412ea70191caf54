#!/usr/bin/env bash
# select/duet with Ranker=model keeps a job that one node could hold on one
# node (the placement routine's consolidation, placement_routine.h): with one
# GPU taken on each of two 4-GPU nodes, a job asking --gpus=4 stays pending,
# where cons_tres's own order spreads it over both at once; when one node is
# free again it starts there, on that node alone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
duet="${DUET:-$top_builddir/duet}"
[ -x "$duet" ] || skip "no duet program in $top_builddir"

duet_cluster_up --nodes 2 --mix v100:4 --speeds 1.0,1.2
model="$CLUSTER_DIR/etc/duet.model"
"$duet" model init --out "$model" --seed 7 >/dev/null || fail "duet model init"

# take_one_gpu_each: one running 1-GPU job on each node; prints their ids
take_one_gpu_each() {
  local a1 a2
  a1=$(sbatch --parsable -o /dev/null -w node1 --gres=gpu:1 --wrap 'sleep infinity') || fail sbatch
  a2=$(sbatch --parsable -o /dev/null -w node2 --gres=gpu:1 --wrap 'sleep infinity') || fail sbatch
  wait_state 20 RUNNING "$a1" "$a2"
  echo "$a1 $a2"
}

# Control, cons_tres's own order (no ranker): the 4-GPU job starts at once on both nodes.
write_duet_conf LogLevel=verbose
read -r a1 a2 <<<"$(take_one_gpu_each)"
b=$(sbatch --parsable -o /dev/null --gpus=4 --wrap 'sleep infinity') || fail sbatch
wait_state 20 RUNNING "$b"
spread=$(field "$b" NodeList)
note "cons_tres order: --gpus=4 on $spread"
[ "$spread" = "node[1-2]" ] || fail "control: cons_tres placed the 4-GPU job on $spread, expected both nodes"
timeout 10 scancel "$a1" "$a2" "$b"
wait_idle 40 node1 node2

# The placement agent: the same job waits for a whole node.
write_duet_conf Ranker=model "PlacementModelPath=$model" "NodeSpeedsFile=$CLUSTER_DIR/nodes.csv" LogLevel=verbose
read -r a1 a2 <<<"$(take_one_gpu_each)"
b=$(sbatch --parsable -o /dev/null --gpus=4 --wrap 'sleep infinity') || fail sbatch
wait_resources 60 "$b" "the 4-GPU job, while no node has 4 GPUs free"
note "Ranker=model: --gpus=4 pending (Resources) while each node has 3 GPUs free"
timeout 10 scancel "$a1"
wait_state 40 RUNNING "$b"
[ "$(field "$b" NodeList)" = node1 ] || fail "the 4-GPU job started on $(field "$b" NodeList), expected node1 alone"
timeout 10 scancel "$a2" "$b"
ctld_alive || fail "slurmctld died"
echo "PASS: cons_tres spread --gpus=4 over node[1-2]; with Ranker=model it waited for node1 and ran there alone"
