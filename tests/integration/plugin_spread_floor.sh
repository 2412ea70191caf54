#!/usr/bin/env bash
# select/duet with Ranker=model keeps a job that no node could hold alone off
# the nodes below its spread floor (policy/learn/agents/machine_set.h): on
# two 4-GPU nodes of speed 1 beside one of speed 0.3, an 8-GPU job's fastest
# set on the idle cluster is the two fast nodes, so the slow node (below half
# of 1) is left out. With one GPU taken on node1 the job stays pending, where
# cons_tres's own order starts it at once with node3; when node1 is free
# again it starts on node[1-2]. A job the fast nodes could never hold (it
# asks for three nodes) is placed without the floor. The one-machine floor:
# a 4-GPU job that either fast node could hold alone keeps off node3 too, so
# with one GPU taken on each fast node it stays pending with node3 idle, and
# starts on node1 once node1 is free.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
duet="${DUET:-$top_builddir/duet}"
[ -x "$duet" ] || skip "no duet program in $top_builddir"

duet_cluster_up --nodes 3 --mix v100:4 --speeds 1.0,1.0,0.3
model="$CLUSTER_DIR/etc/duet.model"
"$duet" model init --out "$model" --seed 7 >/dev/null || fail "duet model init"

# Control, cons_tres's own order (no ranker): the 8-GPU job starts at once, with node3.
write_duet_conf LogLevel=verbose
a=$(sbatch --parsable -o /dev/null -w node1 --gres=gpu:1 --wrap 'sleep infinity') || fail sbatch
wait_state 20 RUNNING "$a"
b=$(sbatch --parsable -o /dev/null --gpus=8 --wrap 'sleep infinity') || fail sbatch
wait_state 20 RUNNING "$b"
spread=$(field "$b" NodeList)
note "cons_tres order: --gpus=8 on $spread"
case "$spread" in node\[2-3\] | node\[1-3\]) ;; *) fail "control: cons_tres placed the 8-GPU job on $spread, expected node3 among them" ;; esac
timeout 10 scancel "$a" "$b"
wait_idle 40 node1 node2 node3

# The placement agent: the same job waits for the two fast nodes.
write_duet_conf Ranker=model "PlacementModelPath=$model" "NodeSpeedsFile=$CLUSTER_DIR/nodes.csv" LogLevel=verbose
a=$(sbatch --parsable -o /dev/null -w node1 --gres=gpu:1 --wrap 'sleep infinity') || fail sbatch
wait_state 20 RUNNING "$a"
b=$(sbatch --parsable -o /dev/null --gpus=8 --wrap 'sleep infinity') || fail sbatch
wait_resources 60 "$b" "the 8-GPU job, while node[1-2] have 7 GPUs free"
note "Ranker=model: --gpus=8 pending (Resources) with 11 GPUs free, 4 of them on the slow node3"
timeout 10 scancel "$a"
wait_state 40 RUNNING "$b"
[ "$(field "$b" NodeList)" = "node[1-2]" ] || fail "the 8-GPU job started on $(field "$b" NodeList), expected node[1-2]"
e=$(explanation "$b")
note "explanation: $e"
[[ "$e" == *"1 nodes below the speed floor left out"* ]] || fail "the explanation does not say node3 was left out: $e"
# A job that names its nodes keeps them (--nodelist): node3 is its own choice.
timeout 10 scancel "$b"
wait_idle 40 node1 node2 node3
c=$(sbatch --parsable -o /dev/null -w node2,node3 --gpus=8 --wrap 'sleep infinity') || fail sbatch
wait_state 40 RUNNING "$c"
[ "$(field "$c" NodeList)" = "node[2-3]" ] || fail "the job naming node2,node3 runs on $(field "$c" NodeList)"
timeout 10 scancel "$c"
wait_idle 40 node1 node2 node3
# A job the nodes above the floor could never hold (it asks for three nodes,
# two are above) runs over all three rather than wait for ever.
d=$(sbatch --parsable -o /dev/null -N 3 --gpus=6 --wrap 'sleep infinity') || fail sbatch
wait_state 40 RUNNING "$d"
[ "$(field "$d" NodeList)" = "node[1-3]" ] || fail "the 3-node job runs on $(field "$d" NodeList)"
e=$(explanation "$d")
note "explanation: $e"
[[ "$e" == *"speed floor not applied"* ]] || fail "the explanation does not say the floor was dropped: $e"
timeout 10 scancel "$d"
wait_idle 40 node1 node2 node3
a=$(sbatch --parsable -o /dev/null -w node1 --gres=gpu:1 --wrap 'sleep infinity') || fail sbatch
a2=$(sbatch --parsable -o /dev/null -w node2 --gres=gpu:1 --wrap 'sleep infinity') || fail sbatch
wait_state 20 RUNNING "$a" "$a2"
f=$(sbatch --parsable -o /dev/null --gpus=4 --wrap 'sleep infinity') || fail sbatch
wait_resources 60 "$f" "the 4-GPU job, while node1 and node2 have 3 GPUs free each"
note "Ranker=model: --gpus=4 pending (Resources) with node3's 4 GPUs free"
timeout 10 scancel "$a"
wait_state 40 RUNNING "$f"
[ "$(field "$f" NodeList)" = node1 ] || fail "the 4-GPU job started on $(field "$f" NodeList), expected node1"
e=$(explanation "$f")
[[ "$e" == *"1 nodes below the speed floor left out"* ]] || fail "the explanation does not say node3 was left out: $e"
timeout 10 scancel "$f" "$a2"
ctld_alive || fail "slurmctld died"
echo "PASS: cons_tres spread --gpus=8 over $spread; with Ranker=model it waited for node[1-2], leaving the slow node3 out; -w node2,node3 kept node3; -N 3 ran on node[1-3] without the floor; --gpus=4 waited for node1 with node3 idle"
