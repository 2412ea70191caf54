#!/usr/bin/env bash
# vmha SPANK plugin, scancel and accounting: a running --ha job that is
# cancelled keeps vmha's record. slurmctld marks the job finished as soon as
# it is cancelled and refuses AdminComment updates from then on, while each
# task's exit (where vmha sums the tasks' results) comes later; the record
# then goes straight to accounting. sacct shows the job CANCELLED with
# "vmha: tasks=2 ... failovers=0" and no slurmd logged a lost AdminComment.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/ha_lib.sh"
ha_setup --kvm epoch=20

jid=$(sbatch --parsable --ha -N2 -o cancel.out --wrap "srun -l $HA_WL/steps 100000 4000000 1")
# once both tasks' first steps are out, each backup holds a checkpoint
ha_wait_task_steps 60 cancel.out 0 1
ha_wait_task_steps 60 cancel.out 1 1
scancel "$jid"
st=$(ha_wait_end 60 "$jid")
[ "$st" = CANCELLED ] || { ha_dump "$jid"; fail "job $jid ended $st"; }
acct=$(ha_wait_accounting 30 "$jid")
note "job $jid: $acct"
case "$acct" in "CANCELLED"*"|vmha: tasks=2 "*" failovers=0") ;; *) fail "accounting of cancelled job $jid: '$acct'" ;; esac
! grep -h "cannot set AdminComment\|could not store its AdminComment" "$CLUSTER_DIR"/log/slurmd-node*.log \
  || fail "a slurmd lost the AdminComment"
echo "ok: a cancelled --ha job keeps vmha's AdminComment in accounting"
