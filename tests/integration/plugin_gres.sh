#!/usr/bin/env bash
# GRES through select/duet (steering on) is cons_tres's: typed and untyped
# --gres=gpu requests get exactly the GPUs asked, on the right node type,
# with CUDA_VISIBLE_DEVICES set to those devices; multi-node jobs too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins

duet_cluster_up --nodes 3 --mix v100:4,p100:4,k80:4 --speeds 0.6,1.0,0.8
write_duet_conf Scorer=small-first Ranker=prefer-fast "NodeSpeedsFile=$CLUSTER_DIR/nodes.csv"
out=$CLUSTER_DIR/out; mkdir -p "$out"
run() { sbatch --parsable -o "$out/%j.out" "$@" --wrap 'echo "CVD=$CUDA_VISIBLE_DEVICES"; sleep 1' || fail "sbatch $*"; }

typed=$(run --gres=gpu:v100:2)
untyped=$(run --gres=gpu:3)
k80=$(run --gres=gpu:k80:4)
two=$(run -N2 --gres=gpu:1)
wait_state 40 COMPLETED "$typed" "$untyped" "$k80" "$two"
for j in "$typed" "$untyped" "$k80" "$two"; do
  note "job $j: $(field "$j" NodeList) $(field "$j" TresPerNode) -> $(tr '\n' ' ' < "$out/$j.out")"
done

[ "$(field "$typed" NodeList)" = node1 ] || fail "v100 job not on node1 (the only v100 node)"
grep -qx 'CVD=0,1' "$out/$typed.out" || fail "typed job CUDA_VISIBLE_DEVICES: $(cat "$out/$typed.out")"
# untyped: prefer-fast puts it on node2 (speed 1.0), 3 devices
[ "$(field "$untyped" NodeList)" = node2 ] || fail "untyped job on $(field "$untyped" NodeList), prefer-fast says node2"
[ "$(sed -n 's/^CVD=//p' "$out/$untyped.out" | tr ',' '\n' | wc -l)" = 3 ] || fail "untyped job got $(cat "$out/$untyped.out")"
[ "$(field "$k80" NodeList)" = node3 ] || fail "k80 job not on node3"
grep -qx 'CVD=0,1,2,3' "$out/$k80.out" || fail "k80 job CUDA_VISIBLE_DEVICES: $(cat "$out/$k80.out")"
# the batch step runs on the first node only: one GPU there
grep -qxE 'CVD=[0-3]' "$out/$two.out" || fail "2-node job CUDA_VISIBLE_DEVICES: $(cat "$out/$two.out")"
[[ "$(field "$two" NodeList)" =~ ^node\[[123][-,][123]\]$ ]] || fail "2-node job NodeList $(field "$two" NodeList)"

# steps inside an allocation see only the allocation's GPUs
s=$(timeout 30 srun -N1 --gres=gpu:v100:3 bash -c 'echo $CUDA_VISIBLE_DEVICES' 2>&1) || fail "srun: $s"
[ "$s" = "0,1,2" ] || fail "srun v100:3 got '$s'"
echo "PASS: typed/untyped/multi-node GPU requests exact under select/duet"
