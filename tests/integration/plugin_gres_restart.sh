#!/usr/bin/env bash
# select/duet after a slurmctld restart starts no GPU job on a node before
# that node's slurmd has registered again (gres_known.h): slurmctld knows a
# node's GPU devices only from its registration, and cons_tres gave a
# typeless --gres=gpu:2 on a gpu:v100 node no devices in that window (the job
# ran without its GPUs and left them allocated; plugin_switch.sh met it when
# a job that pended across duet-admin's switch started then). Whether that
# window is hit depends on timing (a ping answered before the registration is
# read); here node1's slurmd is stopped (SIGSTOP) across the restart while a
# job runs on half its GPUs, and a held GPU job is released: it pends while
# the node has not registered, runs on 2 GPUs once it has, and the node's
# GPUs are all free when both jobs ended.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins

duet_cluster_up --nodes 1 --mix v100:4
gate="$CLUSTER_DIR/go"
gated() { echo "while [ ! -e $gate ]; do sleep 0.2; done"; }
# a runs across the restart on 2 of node1's 4 GPUs; b, held, asks for 2 more
a=$(sbatch --parsable -o /dev/null --gres=gpu:2 --wrap "$(gated)") || fail sbatch
wait_state 30 RUNNING "$a"
b=$(sbatch --parsable -o /dev/null --hold --gres=gpu:2 --wrap "$(gated)") || fail sbatch
wait_state 30 PENDING "$b"

"$TESTCLUSTER" stop-ctld --dir "$CLUSTER_DIR" >/dev/null 2>&1 || fail "slurmctld did not stop"
read -r slurmd _ < "$CLUSTER_DIR/pids/slurmd-node1.pid"
kill -STOP "$slurmd"
trap 'st=$?; kill -CONT "$slurmd" 2>/dev/null; (exit $st); cluster_down' EXIT
"$TESTCLUSTER" start-ctld --dir "$CLUSTER_DIR" >/dev/null 2>&1 || fail "slurmctld did not start"
for _ in $(seq 100); do timeout 5 scontrol ping >/dev/null 2>&1 && break; sleep 0.2; done

# b may run now, but node1 has not registered: b waits (until the scheduler
# has looked at it since its release)
released=$(date +%s)
timeout 10 scontrol release "$b" || fail "scontrol release $b"
evaluated() { [ "$(date -d "$(field "$b" LastSchedEval)" +%s)" -gt "$released" ]; }
for _ in $(seq 150); do evaluated && break; sleep 0.2; done
evaluated || fail "job $b not considered within 30 s of its release"
st=$(field "$b" JobState)
[ "$st" = PENDING ] || { timeout 10 scontrol show job -d "$b"; fail "job $b $st on a node that had not registered"; }
note "job $b pends while node1's slurmd has not registered ($(field "$b" Reason))"

kill -CONT "$slurmd"
wait_state 60 RUNNING "$b"
# (TRES has no gres/gpu without accounting: the job's GRES line tells)
gres=$(timeout 10 scontrol show job -d "$b" | sed -n 's/^ *Nodes=node1 .*GRES=//p')
[[ "$gres" == gpu:v100:2\(IDX:* ]] || { timeout 10 scontrol show job -d "$b"; fail "job $b runs without its 2 GPUs: GRES=$gres"; }
touch "$gate"
wait_state 30 COMPLETED "$a" "$b"
used_gres() { timeout 10 scontrol show node -d node1 | sed -n 's/^ *GresUsed=//p'; }
for _ in $(seq 150); do [ "$(used_gres)" = "gpu:v100:0(IDX:N/A)" ] && break; sleep 0.2; done
used=$(used_gres)
[ "$used" = "gpu:v100:0(IDX:N/A)" ] || fail "node1's GPUs still allocated after the jobs ended: GresUsed=$used"
echo "PASS: a GPU job released after a slurmctld restart waited for its node's registration, then ran on 2 GPUs ($gres) and gave them back"
