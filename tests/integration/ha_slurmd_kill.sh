#!/usr/bin/env bash
# vmha SPANK plugin: kill -9 the slurmd of the node that holds task 1's
# primary (node2, not the batch host) while the program runs: once task 1's
# output shows a random step between the 2nd and a third of the way (seen,
# not guessed from time). A running step does not need its slurmd: the
# primary goes on, and the job ends COMPLETED 0:0 with every task's output
# equal to the native run's; AdminComment shows failovers=0 (nothing was
# lost, so nothing was taken over). The node is left to Slurm's
# SlurmdTimeout; the cluster goes down with the test.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/ha_lib.sh"
ha_setup --kvm epoch=20
# As many steps as make the program run about 4 s natively on this host.
ha_size_steps 4
ARGS="$STEPS 4000000 1"
"$HA_WL/steps" $ARGS > native.out

t0=$(date +%s.%N)
ha_slurmd_kill_round job.out native.out "$STEPS" 60 --wrap "srun -l $HA_WL/steps $ARGS"
t1=$(date +%s.%N)
ha_compare_tasks job.out native.out 0 1
case "$ACCT" in "COMPLETED|0:0|vmha: tasks=2 "*" failovers=0") ;; *) ha_dump "$JID"; fail "accounting: '$ACCT'" ;; esac
echo "ok: node2's slurmd killed mid-run; job COMPLETED in $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s with exact output; sacct: $ACCT"
