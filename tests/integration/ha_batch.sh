#!/usr/bin/env bash
# vmha SPANK plugin, the batch script itself protected: `sbatch --ha -N2
# job.sh`, where job.sh (no srun in it) runs a pipeline (seq 1 200000 |
# sort -n | md5sum, 5 times: a window wide enough to kill in) and a Python
# step printing numbered lines, runs the script in vmha on the batch host
# with its backup on the other node.
#  1. undisturbed: COMPLETED 0:0, output equal to the script run natively
#     (SLURM_* variables and the working directory reach it), one protected
#     task (AdminComment tasks=1), slurmd logs the batch step under vmha-task;
#  2. the primary vmha killed -9 once its backup acknowledged a random
#     checkpoint K >= 2 (1 is before the script's first instruction) of
#     those the undisturbed run had taken before the last md5sum line was
#     out, and before it is out in this run (the pipelines': seq, sort and
#     md5sum running, sort spilling to TMPDIR), and 3. once a random line of the
#     Python step was out:
#     COMPLETED 0:0, every line exactly once (output equal to native),
#     failovers=1, the takeover's cause in slurmd's log;
#  4. `sbatch --ha --wrap` without srun is accepted and protected (it was
#     refused before), and a script that starts srun stays a plain shell:
#     its step's tasks run under vmha, and the job's output says so once.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/ha_lib.sh"
for p in /bin/bash /usr/bin/seq /usr/bin/sort /usr/bin/md5sum /usr/bin/python3; do
  [ -x "$p" ] || skip "$p is not installed"
done
ha_setup --kvm epoch=20

LINES=300 PIPELINES=5
# The job's script: its text must not name Slurm's step launcher, or it
# would stay a plain shell (4.).
cat > job.sh <<EOF
#!/bin/bash
echo "job of \$SLURM_JOB_NUM_NODES nodes, named \$SLURM_JOB_NAME, in \$PWD, id \${SLURM_JOB_ID:+set}"
for i in \$(seq $PIPELINES); do seq 1 200000 | sort -n | md5sum; done
python3 -c 'import sys, time
for i in range(1, int(sys.argv[1]) + 1):
    print("line", i, flush=True)
    time.sleep(0.01)' $LINES
echo "script done"
EOF
chmod +x job.sh
SLURM_JOB_NUM_NODES=2 SLURM_JOB_NAME=job.sh SLURM_JOB_ID=1 ./job.sh > native.out
[ "$(grep -c '^line ' native.out)" = "$LINES" ] || fail "job.sh does not run natively: $(tail -n 3 native.out)"

batch_dir() { echo "$HA_DIR/state/job$1/batch.task0"; }

# same_as_native NAME JID: the job's output file NAME.out is native.out,
# and the script's TMPDIR (sort spilled there) is gone with the job.
same_as_native() {
  [ ! -e ".vmha-tmp.$2" ] || fail "$1: job $2 left its TMPDIR .vmha-tmp.$2 behind"
  cmp -s "$1.out" native.out && return 0
  diff native.out "$1.out" | head -n 8
  ha_dump "$2"
  fail "$1: job $2's output differs from the native run ($(grep -c '^line ' "$1.out") of $LINES Python lines)"
}

MD5_LINE='^[0-9a-f]\{32\}  -$'
# pipelines_done OUT: all md5sum lines are in OUT
# (a file not there yet counts 0).
pipelines_done() {
  local n
  n=$(grep -c "$MD5_LINE" "$1" 2>/dev/null || true)
  [ "${n:-0}" -ge "$PIPELINES" ]
}

# 1. Undisturbed; PIPE_CKPT: the checkpoints the backup held once the last
# md5sum line was out (output is out only after its epoch's acknowledgement).
t0=$(date +%s.%N)
jid=$(sbatch --parsable --ha -N2 -o clean.out job.sh)
PIPE_CKPT=""
for _ in $(seq 12000); do
  ha_read_progress "$(batch_dir "$jid")/primary.stats"
  [ "$HA_RUNNING" = 0 ] && break
  pipelines_done clean.out && { PIPE_CKPT=${HA_CHECKPOINT:-1}; break; }
  sleep 0.005
done
st=$(ha_wait_end 120 "$jid")
t1=$(date +%s.%N)
[ "$st" = COMPLETED ] || { tail -n 5 clean.out; ha_dump "$jid"; fail "job $jid ended $st"; }
same_as_native clean "$jid"
acct=$(ha_wait_accounting 20 "$jid")
case "$acct" in "COMPLETED|0:0|vmha: tasks=1 epochs="*" failovers=0") ;; *) ha_dump "$jid"; fail "accounting: '$acct'" ;; esac
grep -q "job $jid step batch task 0 .*runs under .*vmha-task" "$CLUSTER_DIR"/log/slurmd-node*.log \
  || fail "no 'step batch ... runs under vmha-task' line for job $jid in the slurmd logs"
[ -n "$PIPE_CKPT" ] || fail "job $jid: the md5sum lines were never seen while the script ran"
MAX_CKPT=$PIPE_CKPT
note "job $jid COMPLETED in $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s, output equal to native, the last md5sum line out at checkpoint $PIPE_CKPT; sacct: $acct"

# kill_at_checkpoint JID OUT MAX: kills the batch script's primary vmha (kill
# -9, by its PID) once its backup acknowledged a random checkpoint K
# (2 <= K <= MAX; 1 when MAX is 1) of the running script, while the last
# md5sum line is not in OUT yet (ha_kill_at_checkpoint, on the batch
# task's directory). Returns 1, killing nothing, when the pipelines ended first.
kill_at_checkpoint() {
  local jid=$1 out=$2 max=$3 k=1
  [ "$max" -ge 2 ] && k=$(( 2 + $(od -An -N2 -tu2 /dev/urandom) % (max - 1) ))
  ha_kill_at_checkpoint "$(batch_dir "$jid")/primary.stats" "$k" pipelines_done "$out" || return 1
  note "job $jid: killed the batch script's primary vmha (pid $HA_VICTIM) in its pipelines, once its backup held checkpoint $HA_CHECKPOINT (wanted $k of ..$max; $(grep -c "$MD5_LINE" "$out" || true) of $PIPELINES md5sum lines out)"
}

# kill_at_line JID OUT: kills it once OUT shows the Python step past a random
# line K (2 <= K <= LINES/3; out only once its epoch was acknowledged).
kill_at_line() {
  local jid=$1 out=$2 k victim=""
  for _ in $(seq 1200); do
    victim=$(pgrep -f -- "/vmha run --backup .*--stats-file $(batch_dir "$jid")/primary\.stats" | head -n1 || true)
    [ -n "$victim" ] && break
    sleep 0.05
  done
  [ -n "$victim" ] || { ha_dump "$jid"; fail "job $jid: the batch script's primary vmha never appeared"; }
  k=$(( 2 + $(od -An -N2 -tu2 /dev/urandom) % (LINES / 3 - 1) ))
  ha_kill_after_lines "$victim" "$out" '^line ' "$k" || return 1
  note "job $jid: killed the batch script's primary vmha (pid $victim) once Python's line $k of $LINES was out"
}

# failover_round NAME KILL [MAX]: job.sh with its primary killed by `KILL
# JID NAME.out MAX`; a kill that came after the script had ended is tried again (3
# attempts). COMPLETED 0:0, output equal to native, failovers=1, and the
# takeover's cause in slurmd's log.
failover_round() {
  local name=$1 kill_fn=$2 max=${3:-} jid st acct try
  for try in 1 2 3; do
    rm -f "$name.out"  # an earlier attempt's lines would read as this one's
    jid=$(sbatch --parsable --ha -N2 -o "$name.out" job.sh)
    if ! "$kill_fn" "$jid" "$name.out" "$max"; then
      st=$(ha_wait_end 120 "$jid")
      [ "$st" = COMPLETED ] || { ha_dump "$jid"; fail "$name: job $jid ended $st before the kill"; }
      same_as_native "$name" "$jid"
      note "$name: job $jid's script got past the kill's point first; again"
      [ -n "$max" ] && max=$(( max > 4 ? max / 4 : 1 ))
      continue
    fi
    st=$(ha_wait_end 120 "$jid")
    [ "$st" = COMPLETED ] || { tail -n 5 "$name.out"; ha_dump "$jid"; fail "$name: job $jid ended $st"; }
    same_as_native "$name" "$jid"
    acct=$(ha_wait_accounting 20 "$jid")
    case "$acct" in
      "COMPLETED|0:0|vmha: tasks=1 "*" failovers=1")
        grep -q "vmha: job $jid batch.task0: the primary vmha on node[0-9]* was killed by signal 9 " \
          "$CLUSTER_DIR"/log/slurmd-node*.log || { ha_dump "$jid"; fail "$name: no takeover cause in slurmd's log"; }
        note "$name: job $jid COMPLETED, output exact; sacct: $acct"
        return 0 ;;
      "COMPLETED|0:0|vmha: tasks=1 "*" failovers=0")
        note "$name: output exact, but the kill came after the script had ended (no takeover); again" ;;
      *) ha_dump "$jid"; fail "$name: accounting '$acct'" ;;
    esac
  done
  fail "$name: no attempt killed the primary while the script ran"
}

# 2. and 3. The primary killed mid-run.
failover_round kill_ckpt kill_at_checkpoint "$MAX_CKPT"
failover_round kill_line kill_at_line

# 4. --wrap without srun runs protected; a script that starts srun does not.
jid=$(sbatch --parsable --ha -N2 -o wrap.out --wrap 'echo "wrapped in $SLURM_JOB_NUM_NODES"') \
  || fail "sbatch --ha --wrap without srun refused"
st=$(ha_wait_end 120 "$jid")
[ "$st" = COMPLETED ] && [ "$(cat wrap.out)" = "wrapped in 2" ] || { ha_dump "$jid"; fail "--wrap job $jid: $st, output '$(cat wrap.out)'"; }
acct=$(ha_wait_accounting 20 "$jid")
case "$acct" in "COMPLETED|0:0|vmha: tasks=1 "*) ;; *) fail "--wrap job $jid: accounting '$acct'" ;; esac
printf '#!/bin/sh\nsrun -l /bin/echo hello\n' > with_steps.sh
jid=$(sbatch --parsable --ha -N2 -o steps.out with_steps.sh)
st=$(ha_wait_end 120 "$jid")
[ "$st" = COMPLETED ] || { cat steps.out; ha_dump "$jid"; fail "job $jid with srun ended $st"; }
[ "$(grep -c 'the batch script starts srun, so it runs as a plain shell, unprotected' steps.out)" = 1 ] \
  || fail "job $jid: its output does not say once that the script runs unprotected: $(cat steps.out)"
[ "$(sed -n 's/^ *\([01]\): hello$/\1/p' steps.out | sort | tr -d '\n')" = 01 ] || fail "job $jid: step output $(cat steps.out)"
grep -q "job $jid step 0 task [01] .*runs under .*vmha-task" "$CLUSTER_DIR"/log/slurmd-node*.log \
  || fail "job $jid: its srun step did not run under vmha-task"
grep -q "job $jid step batch " "$CLUSTER_DIR"/log/slurmd-node*.log && fail "job $jid: its script ran under vmha"
acct=$(ha_wait_accounting 20 "$jid")
case "$acct" in "COMPLETED|0:0|vmha: tasks=2 "*) ;; *) fail "job $jid with srun: accounting '$acct'" ;; esac
note "--wrap without srun: protected ($(cat wrap.out)); a script with srun: a plain shell, its step's 2 tasks protected"
echo "ok: sbatch --ha job.sh (a pipeline and a Python step) COMPLETED with the native output in vmha, and after its primary was killed in its pipeline and at a random line of its Python step, every line once, failovers=1"
