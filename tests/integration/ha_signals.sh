#!/usr/bin/env bash
# vmha SPANK plugin, exit codes and signals: a protected program's exit code
# is the step's and the job's (sacct ExitCode 3:0, state FAILED); `scancel`
# of a running --ha job ends the program by Slurm's signal on both sides: the
# job ends CANCELLED within seconds, no vmha process of it is left, and the
# backup did not take over (AdminComment failovers=0); a program with a
# SIGTERM handler that writes a final line has that line out once per task;
# `scancel --signal=USR1` runs the program's SIGUSR1 handler exactly once per
# task and ends nothing; a program that kills itself with SIGSEGV fails the
# job with no takeover.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/ha_lib.sh"
BB=$(command -v busybox || true)
[ -n "$BB" ] && file -L "$BB" 2>/dev/null | grep -q "statically linked" \
  || skip "no statically linked busybox (Debian: apt-get install busybox-static)"
ha_setup --kvm epoch=20

# 1. The program's exit code, through vmha-task and srun, is the job's.
jid=$(sbatch --parsable --ha -N2 -o exit.out --wrap "srun -n2 $BB sh -c 'echo before; exit 3'")
st=$(ha_wait_end 90 "$jid")
[ "$st" = FAILED ] || { cat exit.out; ha_dump "$jid"; fail "exit 3: job $jid ended $st, expected FAILED"; }
[ "$(grep -c '^before$' exit.out)" = 2 ] || { cat exit.out; fail "exit 3: expected 'before' from both tasks"; }
acct=$(ha_wait_accounting 20 "$jid")
case "$acct" in "FAILED|3:0|vmha: tasks=2 "*" failovers=0") ;; *) fail "exit 3: accounting '$acct'" ;; esac
note "exit 3 inside vmha: job $jid $acct"

# 2. scancel while the program runs: Slurm signals the step; the program ends
# by it and no failover takes place.
jid=$(sbatch --parsable --ha -N2 -o cancel.out --wrap "srun -l $HA_WL/steps 100000 4000000 1")
ha_wait_pids 60 "$jid" "^[^ ]*/vmha run --backup" 2
ha_wait_pids 60 "$jid" "^[^ ]*/vmha backup --listen" 2
# Cancel while the program runs: once both tasks' first steps are out (each
# backup then holds an acknowledged checkpoint it could take over from).
ha_wait_task_steps 60 cancel.out 0 1
ha_wait_task_steps 60 cancel.out 1 1
# Keep copies of the backups' logs and --stats-files (written only at a
# takeover, vmha(1)): the job epilog removes them.
( while [ -d "$HA_DIR/state/job$jid" ]; do
    for f in "$HA_DIR/state/job$jid"/*/{backup,primary,srun}.log "$HA_DIR/state/job$jid"/*/backup.stats; do
      d=${f%/*} b=${f##*/}   # DIR/step0.task1/backup.log -> backup.step0.task1.log
      [ -f "$f" ] && cp "$f" "${b%.*}.${d##*/}.${b##*.}" 2>/dev/null
    done
    sleep 0.05
  done ) &
copier=$!
t0=$(date +%s.%N)
scancel "$jid"
st=$(ha_wait_end 60 "$jid")
t1=$(date +%s.%N)
wait "$copier" || true
[ "$st" = CANCELLED ] || { ha_dump "$jid"; fail "scancel: job $jid ended $st"; }
for _ in $(seq 100); do
  left=$(ha_pids "$jid" "^[^ ]*/vmha (run|backup) ")
  [ -z "$left" ] && break
  sleep 0.1
done
[ -z "$left" ] || fail "scancel: vmha processes of job $jid still alive 10 s after it ended: $left"
grep -q "step 1 of 100000" cancel.out || fail "scancel: the program never printed (it did not run)"
logs=$(ls backup.step0.task*.log 2>/dev/null | wc -l)
[ "$logs" = 2 ] || fail "scancel: expected the logs of 2 backups, got $logs"
if grep -H '^takeover=1$' backup.step0.task*.stats 2>/dev/null; then
  tail -n 20 primary.step0.task*.log srun.step0.task*.log 2>/dev/null
  grep -h "vmha\|error" "$CLUSTER_DIR"/log/slurmd-node*.log 2>/dev/null | tail -n 20
  fail "scancel: a backup took over"
fi
note "scancel: job $jid ended $st in $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s after scancel; neither backup took over"

# 3. A program with a SIGTERM handler that writes a final line and exits 0
# (vmha passes Slurm's SIGTERM on to it): scancel runs the handler, and each
# task's final line is in the output exactly once.
PROBE="$top_builddir/tests/vmha/signal_probe"
jid=$(sbatch --parsable --ha -N2 -o term.out --wrap "srun -l $PROBE ticks 100000 20")
ha_wait_pids 60 "$jid" "^[^ ]*/vmha run --backup" 2
ha_wait_pids 60 "$jid" "^[^ ]*/vmha backup --listen" 2
for _ in $(seq 3000); do
  [ "$(grep -c '^ *[01]: tick 3$' term.out 2>/dev/null)" = 2 ] && break
  sleep 0.02
done
[ "$(grep -c '^ *[01]: tick 3$' term.out)" = 2 ] || { cat term.out; ha_dump "$jid"; fail "handler: no ticks from both tasks"; }
# SIGUSR1 reaches the program once per task (Slurm signals every process of
# the step: vmha-task must not pass it on a second time) and the job goes on.
scancel --signal=USR1 "$jid"
for _ in $(seq 1500); do
  [ "$(grep -c '^ *[01]: usr1$' term.out 2>/dev/null)" -ge 2 ] && break
  sleep 0.02
done
[ "$(grep -c '^ *[01]: usr1$' term.out)" -ge 2 ] || { cat term.out; ha_dump "$jid"; fail "USR1: no handler output from both tasks"; }
# Whether vmha-task passed Slurm's copy on a second time is observable:
# it notes each signal it got in its task directory (DIR/signals), with how
# many it passed on to the primary. Wait for both tasks' notes of SIGUSR1.
usr1_notes() { cat "$HA_DIR/state/job$jid"/step0.task*/signals 2>/dev/null | grep '^SIGUSR1: ' || true; }
for _ in $(seq 3000); do
  [ "$(usr1_notes | wc -l)" -ge 2 ] && break
  sleep 0.02
done
notes=$(usr1_notes)
[ "$(wc -l <<< "$notes")" -ge 2 ] || { ha_dump "$jid"; fail "USR1: vmha-task did not note SIGUSR1 for both tasks: $notes"; }
if grep -v ' 0 passed on to the primary ' <<< "$notes"; then
  ha_dump "$jid"; fail "USR1: vmha-task passed Slurm's SIGUSR1 on to the primary (a second delivery)"
fi
# and the job goes on: task 0 keeps ticking
ticks=$(grep -c '^ *0: tick' term.out)
for _ in $(seq 3000); do
  [ "$(grep -c '^ *0: tick' term.out)" -ge $((ticks + 10)) ] && break
  sleep 0.02
done
[ "$(grep -c '^ *0: tick' term.out)" -ge $((ticks + 10)) ] || { cat term.out; ha_dump "$jid"; fail "USR1: task 0 stopped ticking"; }
[ "$(timeout 10 squeue -h -j "$jid" -o %T)" = RUNNING ] || { ha_dump "$jid"; fail "USR1 ended job $jid"; }
# the backups got SIGUSR1 too: they must still be there to protect the job
backups=$(ha_pids "$jid" "^[^ ]*/vmha backup --listen" | wc -l)
[ "$backups" = 2 ] || { ha_dump "$jid"; fail "USR1: $backups of 2 backups left (SIGUSR1 ended a backup)"; }
scancel "$jid"
st=$(ha_wait_end 60 "$jid")
[ "$st" = CANCELLED ] || { ha_dump "$jid"; fail "handler: job $jid ended $st"; }
for task in 0 1; do
  n=$(grep -c "^ *$task: final line$" term.out || true)
  [ "$n" = 1 ] || { cat term.out; ha_dump "$jid"; fail "handler: task $task's final line appeared $n times"; }
  # counted once the job has ended and its output is complete
  n=$(grep -c "^ *$task: usr1$" term.out || true)
  [ "$n" = 1 ] || { cat term.out; fail "USR1: task $task's handler ran $n times"; }
done
note "scancel of a program with a SIGTERM handler: job $jid $st, each task's final line once"
# 4. A program killed by its own signal (a crash, an abort, a kill of itself)
# ends as it would natively: the job FAILED by that signal, each task's line
# out once, and no failover (the backup would only run into the same signal).
jid=$(sbatch --parsable --ha -N2 -o crash.out --wrap "srun -n2 $BB sh -c 'echo before; kill -SEGV \$\$; echo after'")
st=$(ha_wait_end 90 "$jid")
[ "$st" = FAILED ] || { cat crash.out; ha_dump "$jid"; fail "crash: job $jid ended $st, expected FAILED"; }
[ "$(grep -c '^before$' crash.out)" = 2 ] || { cat crash.out; fail "crash: expected 'before' once from each task"; }
! grep -q '^after$' crash.out || { cat crash.out; fail "crash: the program went on after its SIGSEGV"; }
[ "$(grep -c 'task [01]: Segmentation fault$' crash.out)" = 2 ] || { cat crash.out; fail "crash: srun did not report each task's SIGSEGV (without a core of vmha-task)"; }
acct=$(ha_wait_accounting 20 "$jid")
case "$acct" in "FAILED|"*"|vmha: tasks=2 "*" failovers=0") ;; *) ha_dump "$jid"; fail "crash: accounting '$acct'" ;; esac
# vmha-task saw the program's end in the primary's record: it never called
# for the backup (no takeover cause logged), Bye or not
! grep -h "job $jid step0.task[01]: the primary vmha .* was killed" "$CLUSTER_DIR"/log/slurmd-node*.log \
  || fail "crash: vmha-task took the program's SIGSEGV for the primary's death"
note "a program killed by its own SIGSEGV: job $jid $acct"

echo "ok: exit code 3 reached sacct; a program's own SIGSEGV failed the job with no takeover; scancel ended the --ha job with no takeover and no vmha left; SIGUSR1 and SIGTERM handlers ran once per task, SIGUSR1 left both backups running"
