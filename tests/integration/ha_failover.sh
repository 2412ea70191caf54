#!/usr/bin/env bash
# vmha SPANK plugin, failover through Slurm: kill -9 the primary vmha of one
# task of an --ha job while its program runs, at a random step between the
# 2nd and a third of the way (seen in the job's output, not guessed from
# time). The backup (a step on the other node) resumes the program; the job
# still ends COMPLETED 0:0, every task's output equals the native run's line
# for line (nothing lost, nothing twice), and AdminComment counts the
# failover. Two rounds: task 0 with the site epoch, task 1 with --ha=30. A
# kill that lands after the program ended is retried (at most 3 attempts).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/ha_lib.sh"
ha_setup --kvm epoch=20
# As many steps as make the program run about 4 s natively on this host.
ha_size_steps 4
ARGS="$STEPS 4000000 1"
"$HA_WL/steps" $ARGS > native.out
note "$STEPS steps (30 took ${HA_NATIVE_S} s of CPU natively)"

ha_failover_round job1 0 --ha native.out "$STEPS" "srun -l $HA_WL/steps $ARGS"
ha_failover_round job2 1 --ha=30 native.out "$STEPS" "srun -l $HA_WL/steps $ARGS"
echo "ok: primary vmha killed twice; both jobs COMPLETED 0:0 with exact output and failovers=1"
