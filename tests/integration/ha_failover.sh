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

# attempt N RANK HA-OPTION: submits the job and kills the primary vmha of
# task RANK once the job's output shows that task past a random step K
# (2 <= K <= STEPS/3); sets JID. Returns 1 when the primary had already ended.
attempt() {
  local n=$1 rank=$2 opt=$3 victim k out
  JID=$(sbatch --parsable "$opt" -N2 -o "job$n.out" --wrap "srun -l $HA_WL/steps $ARGS")
  victim=""
  for _ in $(seq 600); do
    victim=$(ha_pids "$JID" "^[^ ]*/vmha run --backup" | awk -v r="$rank" '$2 == r {print $1}' | head -n1)
    [ -n "$victim" ] && break
    sleep 0.05
  done
  [ -n "$victim" ] || { ha_dump "$JID"; fail "round $n: the primary vmha of task $rank never appeared"; }
  k=$(( 2 + $(od -An -N2 -tu2 /dev/urandom) % (STEPS / 3 - 1) ))
  for _ in $(seq 6000); do
    out=$(grep -c "^ *$rank: step" "job$n.out" 2>/dev/null || true)
    [ "${out:-0}" -ge "$k" ] && break
    kill -0 "$victim" 2>/dev/null || return 1
    sleep 0.02
  done
  kill -9 "$victim" 2>/dev/null || return 1   # this process only, by its PID
  note "round $n: killed the primary vmha of task $rank (pid $victim) once step $k of $STEPS was out; $(grep -c "^ *$rank: step" "job$n.out" || true) of its lines were out"
}

# round N RANK HA-OPTION: the job must end COMPLETED 0:0 with exact output
# and a failover; a kill that came after the program had ended (the backup
# learned the end from the primary: no takeover) is tried again.
round() {
  local n=$1 rank=$2 opt=$3 st acct t0 t1 try
  for try in 1 2 3; do
    t0=$(date +%s.%N)
    if ! attempt "$n" "$rank" "$opt"; then
      note "round $n: the primary of task $rank ended before the kill; again"
      ha_wait_end 90 "$JID" > /dev/null
      continue
    fi
    st=$(ha_wait_end 90 "$JID")
    t1=$(date +%s.%N)
    [ "$st" = COMPLETED ] || { tail -n 5 "job$n.out"; ha_dump "$JID"; fail "round $n: job $JID ended $st"; }
    ha_compare_tasks "job$n.out" native.out 0 1
    acct=$(ha_wait_accounting 20 "$JID")
    case "$acct" in
      "COMPLETED|0:0|vmha: tasks=2 "*" failovers=1")
        # slurmd's log says why the backup took over (task RANK's slurmstepd)
        grep -q "vmha: job $JID step0.task$rank: the primary vmha on node[0-9]* was killed by signal 9 " \
          "$CLUSTER_DIR"/log/slurmd-node*.log || { ha_dump "$JID"; fail "round $n: no takeover cause in slurmd's log"; }
        note "round $n: job $JID in $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s, outputs exact; sacct: $acct"
        return 0 ;;
      "COMPLETED|0:0|vmha: tasks=2 "*" failovers=0")
        note "round $n: outputs exact, but the kill came after the program had ended (no takeover); again" ;;
      *) ha_dump "$JID"; fail "round $n: accounting '$acct'" ;;
    esac
  done
  fail "round $n: no attempt killed the primary while its program ran"
}
round 1 0 --ha
round 2 1 --ha=30
echo "ok: primary vmha killed twice; both jobs COMPLETED 0:0 with exact output and failovers=1"
