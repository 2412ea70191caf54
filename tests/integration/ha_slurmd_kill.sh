#!/usr/bin/env bash
# vmha SPANK plugin: kill -9 the slurmd of the node that holds task 1's
# primary (node2, not the batch host), 0.3-1.2 s into the run. A running
# step does not need its slurmd: the primary goes on, and the job ends
# COMPLETED 0:0 with every task's output equal to the native run's;
# AdminComment shows failovers=0 (nothing was lost, so nothing was taken
# over). The node is left to Slurm's SlurmdTimeout; the cluster goes down
# with the test.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/ha_lib.sh"
ha_require
ha_require_kvm
ha_cluster_up epoch=20
cd "$HA_DIR/work"
ARGS="30 4000000 1"
"$HA_WL/steps" $ARGS > native.out

t0=$(date +%s.%N)
jid=$(sbatch --parsable --ha -N2 -o job.out --wrap "srun -l $HA_WL/steps $ARGS")
primary=""
for _ in $(seq 600); do
  primary=$(ha_pids "$jid" "^[^ ]*/vmha run --backup" | awk '$2 == 1 && $4 == "node2" {print $1}' | head -n1)
  [ -n "$primary" ] && break
  sleep 0.05
done
[ -n "$primary" ] || { ha_dump "$jid"; fail "the primary vmha of task 1 never appeared on node2"; }
ms=$(( 300 + $(od -An -N2 -tu2 /dev/urandom) % 900 ))
sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
read -r slurmd _ < "$CLUSTER_DIR/pids/slurmd-node2.pid"
kill -9 "$slurmd"   # node2's slurmd only, by its PID
note "killed node2's slurmd (pid $slurmd) ${ms} ms after task 1's primary started"
acct=$(ha_wait_accounting 90 "$jid")
t1=$(date +%s.%N)
ha_compare_tasks job.out native.out 0 1
case "$acct" in "COMPLETED|0:0|vmha: tasks=2 "*" failovers=0") ;; *) ha_dump "$jid"; fail "accounting: '$acct'" ;; esac
echo "ok: node2's slurmd killed mid-run; job COMPLETED in $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s with exact output; sacct: $acct"
