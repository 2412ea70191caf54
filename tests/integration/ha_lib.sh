# Helpers for the vmha SPANK plugin tests (sourced after lib.sh): a 2-node
# test cluster whose plugstack.conf loads vmha.so from the build tree.
: "${top_builddir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
HA_SO="$top_builddir/plugins/spank/vmha/.libs/vmha.so"
HA_TASK="$top_builddir/plugins/spank/vmha-task"
HA_VMHA="$top_builddir/vmha/vmha"
HA_WL="$top_builddir/vmha/workloads"

ha_require() {
  require_cluster_tools
  [ -f "$HA_SO" ] && [ -x "$HA_TASK" ] && [ -x "$HA_VMHA" ] || fail "vmha.so, vmha-task or vmha not built in $top_builddir"
}

. "$top_srcdir/tests/integration/require_kvm.sh"
ha_require_kvm() { require_kvm; }

# ha_cluster_up [PLUGSTACK_ARG...] [-- TESTCLUSTER_ARG...]: sets HA_DIR (work
# files: plugstack.conf, state/, work/), starts a 2-node cluster.
ha_cluster_up() {
  local args=() extra=()
  while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then shift; extra=("$@"); break; fi
    args+=("$1"); shift
  done
  HA_DIR=$(mktemp -d /tmp/duet-ha.XXXXXX)
  mkdir -p "$HA_DIR/work" "$HA_DIR/state"
  echo "required $HA_SO vmha=$HA_VMHA task=$HA_TASK statedir=$HA_DIR/state memory=256 lease=300 ${args[*]}" \
    > "$HA_DIR/plugstack.conf"
  cluster_up --nodes 2 --cpus 2 --set "PlugStackConfig=$HA_DIR/plugstack.conf" "${extra[@]}"
  trap 'cluster_down; rm -rf "$HA_DIR"' EXIT
}

# On failure (lib.sh's cluster_down): what vmha said, in the slurmd logs
# (takeover causes, task ends) and in the jobs' output files (vmha's own
# errors go to the task's stderr), before the cluster and its files go.
on_test_failure() {
  local f jobs_dir
  [ -n "${HA_DIR:-}" ] || return 0
  jobs_dir="$HA_DIR/work"  # where the tests submit from: job outputs, cores
  echo "--- vmha lines of the slurmd logs"
  grep -h "vmha" "$CLUSTER_DIR"/log/slurmd-node*.log 2>/dev/null | tail -n 30
  for f in "$HA_DIR"/state/job*/step*.task*/signals; do
    [ -f "$f" ] && { echo "--- signals vmha-task received: $f"; tail -n 10 "$f"; }
  done
  for f in "$jobs_dir"/*.out; do
    [ -f "$f" ] || continue
    grep -q "vmha" "$f" && { echo "--- vmha lines of $f"; grep "vmha" "$f" | tail -n 10; }
  done
  local cores=("$jobs_dir"/core*) kept
  if [ -e "${cores[0]}" ] && kept=$(mktemp -d /tmp/duet-failed.XXXXXX); then
    mv "${cores[@]}" "$kept/"
    echo "--- a process of the job dumped core: kept in $kept"
    if command -v gdb >/dev/null; then
      for f in "$kept"/core*; do
        gdb -batch -ex "info threads" -ex "thread apply all bt 12" "$HA_VMHA" "$f" 2>/dev/null | tail -n 60
      done
    fi
  fi
  return 0
}

# ha_setup [--kvm] [PLUGSTACK_ARG...] [-- TESTCLUSTER_ARG...]: how every ha_*
# test starts: the tools are built (and KVM is usable, with --kvm), a 2-node
# cluster is up (ha_cluster_up's arguments) and the shell is in $HA_DIR/work.
ha_setup() {
  ha_require
  if [ "${1:-}" = --kvm ]; then shift; ha_require_kvm; fi
  ha_cluster_up "$@"
  cd "$HA_DIR/work"
  # Jobs inherit the submitter's limits (PropagateResourceLimits): a vmha
  # that crashes leaves a core in the job's directory for on_test_failure.
  ulimit -c unlimited 2>/dev/null || true
}

# ha_size_steps SECS: size_steps (steps_size.sh) for the cluster's workload;
# HA_NATIVE_S is the CPU time 30 steps took natively.
. "$top_srcdir/tests/integration/steps_size.sh"
ha_size_steps() {
  size_steps "$HA_WL/steps" "$1"
  HA_NATIVE_S=$NATIVE_S
}

# ha_wait_task_steps SECS OUT RANK K: until the `srun -l` output OUT shows
# task RANK past step K (its output is out only once its epoch was
# acknowledged, so the backup holds a checkpoint by then)
ha_wait_task_steps() {
  local i n
  for i in $(seq $(( $1 * 50 ))); do
    n=$(grep -c "^ *$3: step" "$2" 2>/dev/null || true)
    [ "${n:-0}" -ge "$4" ] && return 0
    sleep 0.02
  done
  fail "task $3 did not print $4 steps into $2 within $1 s"
}

# ha_pids JOBID PATTERN: live processes of job JOBID whose command line
# matches PATTERN (pgrep -f), as "PID PROCID STEPID NODE PARENT" lines
# (PARENT: the parent's program name)
ha_pids() {
  local pid st env ppid parent
  for pid in $(pgrep -f -- "$2" || true); do
    env=$(tr '\0' '\n' 2>/dev/null < "/proc/$pid/environ") || continue
    # no `| grep -q` here: with pipefail, an early grep exit fails the pipe
    grep -qx "SLURM_JOB_ID=$1" <<< "$env" || continue
    read -r st ppid < <(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1,2) || continue
    case "$st" in Z|X|"") continue ;; esac
    parent=$(tr '\0' '\n' 2>/dev/null < "/proc/$ppid/cmdline" | head -n1) || true
    echo "$pid $(sed -n 's/^SLURM_PROCID=//p' <<< "$env") $(sed -n 's/^SLURM_STEP_ID=//p' <<< "$env") $(sed -n 's/^SLURMD_NODENAME=//p' <<< "$env") ${parent##*/}"
  done
}

# ha_wait_pids SECS JOBID PATTERN N: until N such processes exist
ha_wait_pids() {
  local i
  for i in $(seq $(( $1 * 20 ))); do
    [ "$(ha_pids "$2" "$3" | wc -l)" -ge "$4" ] && return 0
    sleep 0.05
  done
  fail "fewer than $4 processes matching '$3' in job $2 after $1 s"
}

# ha_task_output FILE RANK: the lines of task RANK in a `srun -l` output file
ha_task_output() { sed -n "s/^ *$2: //p" "$1"; }

# ha_sacct JOBID FIELD: the job's FIELD in accounting
ha_sacct() { timeout 10 sacct -X -n -P -j "$1" --format="$2" | head -n1; }

# ha_state JOBID: the job's state from slurmctld (also after it ended)
ha_state() { timeout 10 scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n 's/^JobState=//p' | head -n1; }

# ha_wait_end SECS JOBID: until the job left the running states; prints the state
ha_wait_end() {
  local i st
  for i in $(seq $(( $1 * 5 ))); do
    st=$(ha_state "$2")
    case "$st" in PENDING|RUNNING|CONFIGURING|COMPLETING|"") sleep 0.2 ;; *) echo "$st"; return 0 ;; esac
  done
  timeout 10 squeue || true
  fail "job $2 not finished after $1 s"
}

# ha_wait_accounting SECS JOBID: until sacct has the job COMPLETED with its
# AdminComment; prints "State|ExitCode|AdminComment"
ha_wait_accounting() {
  local i line
  for i in $(seq $(( $1 * 4 ))); do
    line=$(timeout 10 sacct -X -n -P -j "$2" --format=State,ExitCode,AdminComment 2>/dev/null | head -n1)
    case "$line" in *"|vmha: "*) echo "$line"; return 0 ;; esac
    sleep 0.25
  done
  fail "job $2: no final accounting record with an AdminComment after $1 s (last: '$line')"
}

# ha_compare_tasks OUT NATIVE RANKS...: each rank's lines of a `srun -l` output equal NATIVE;
# with HA_TASK_FILES=PATTERN (srun -o PATTERN, %t for the rank: a program
# whose output is not lines, gzip's), each rank's file instead of OUT
ha_compare_tasks() {
  local out=$1 native=$2 r; shift 2
  for r in "$@"; do
    if [ -n "${HA_TASK_FILES:-}" ]; then
      cmp -s "${HA_TASK_FILES//%t/$r}" "$native" || fail "task $r: ${HA_TASK_FILES//%t/$r} differs from the native output"
      continue
    fi
    ha_task_output "$out" "$r" > "$out.task$r"
    cmp -s "$out.task$r" "$native" || { diff "$native" "$out.task$r" | head -n 5; fail "task $r: output differs from the native run ($(wc -l < "$out.task$r") of $(wc -l < "$native") lines)"; }
  done
}

# ha_dump JOBID: what a failing test needs to see: squeue, the job's task
# logs (srun, primary, backup) and the plugin's lines in the slurmd logs
ha_dump() {
  local f
  timeout 10 squeue -s 2>/dev/null || true
  for f in "$HA_DIR/state/job$1"/*/srun.log "$HA_DIR/state/job$1"/*/primary.log "$HA_DIR/state/job$1"/*/backup.log; do
    [ -s "$f" ] && { echo "--- $f"; tail -n 5 "$f"; }
  done
  grep -h "vmha\|error" "$CLUSTER_DIR"/log/slurmd-node*.log 2>/dev/null | tail -n 10 || true
}

# ha_kill_slurmd_mid_run JID OUT TOTAL SECS: once task 1's primary vmha runs
# on node2 and OUT shows task 1 past a random line K (2 <= K <= TOTAL/3,
# within SECS s), kills node2's slurmd alone (kill -9, by its PID); the
# primary must still be running then.
ha_kill_slurmd_mid_run() {
  local jid=$1 out=$2 total=$3 secs=$4 primary="" k slurmd
  for _ in $(seq 600); do
    primary=$(ha_pids "$jid" "^[^ ]*/vmha run --backup" | awk '$2 == 1 && $4 == "node2" {print $1}' | head -n1)
    [ -n "$primary" ] && break
    sleep 0.05
  done
  [ -n "$primary" ] || { ha_dump "$jid"; fail "the primary vmha of task 1 never appeared on node2"; }
  k=$(( 2 + $(od -An -N2 -tu2 /dev/urandom) % (total / 3 - 1) ))
  ha_wait_task_steps "$secs" "$out" 1 "$k"
  kill -0 "$primary" 2>/dev/null || return 1
  read -r slurmd _ < "$CLUSTER_DIR/pids/slurmd-node2.pid"
  kill -9 "$slurmd"
  note "killed node2's slurmd (pid $slurmd) once line $k of $total of task 1 was out"
}

# ha_slurmd_kill_round OUT NATIVE TOTAL SECS SBATCH_ARG...: `sbatch --ha -N2
# -o OUT SBATCH_ARG...` with node2's slurmd killed while task 1's primary
# runs (ha_kill_slurmd_mid_run). Output reaches OUT through srun, late on a
# loaded host: a run whose primary had ended before the kill must have ended
# clean (COMPLETED 0:0, output equal to NATIVE, failovers=0) and is tried
# again, 3 attempts in all. Sets JID and ACCT (the job's accounting line).
ha_slurmd_kill_round() {
  local out=$1 native=$2 total=$3 secs=$4 try
  shift 4
  for try in 1 2 3; do
    JID=$(sbatch --parsable --ha -N2 -o "$out" "$@")
    if ha_kill_slurmd_mid_run "$JID" "$out" "$total" "$secs"; then
      ACCT=$(ha_wait_accounting 120 "$JID")
      return 0
    fi
    ACCT=$(ha_wait_accounting 120 "$JID")
    ha_compare_tasks "$out" "$native" 0 1
    case "$ACCT" in
      "COMPLETED|0:0|vmha: tasks=2 "*" failovers=0") ;;
      *) ha_dump "$JID"; fail "job $JID ended before its slurmd kill, and not clean: accounting '$ACCT'" ;;
    esac
    note "job $JID: task 1's primary ended before the kill (its output came late); again"
  done
  fail "no attempt killed node2's slurmd while task 1's primary ran"
}

# ha_read_progress FILE: HA_RUNNING and HA_CHECKPOINT from a primary's
# --stats-file (vmha(1): running=1 and checkpoints=N while the program
# runs, running=0 once its end is checkpointed, then the final statistics,
# HA_RUNNING=0 too); empty when there is no such file yet. Shell builtins
# only: a watcher that forks per look lags behind a short program on a
# loaded host.
ha_read_progress() {
  local k v
  HA_RUNNING="" HA_CHECKPOINT=""
  [ -f "$1" ] || return 0
  while IFS='=' read -r k v; do
    case "$k" in
      running) HA_RUNNING=$v ;;
      checkpoints) HA_CHECKPOINT=$v ;;
      epochs) HA_RUNNING=0 ;;
    esac
  done < "$1" 2>/dev/null || true
}

# ha_kill_at_checkpoint STATS K [STOP...]: kills (kill -9, by its PID) the
# primary vmha whose --stats-file is STATS (a path, or a glob that becomes
# one once the file exists) once its backup acknowledged checkpoint K of the
# running program; sets HA_VICTIM. Returns 1, killing nothing, when the
# primary or its program ended first, or when the command STOP... succeeds
# (the point the caller wanted to kill before has passed).
ha_kill_at_checkpoint() {
  local glob=$1 k=$2 f victim=""
  shift 2
  for _ in $(seq 12000); do
    for f in $glob; do :; done
    ha_read_progress "$f"
    if [ -n "$HA_RUNNING" ] && [ -z "$victim" ]; then
      victim=$(pgrep -f -- "/vmha run --backup .*--stats-file ${f//./\\.}" | head -n1 || true)
      [ -n "$victim" ] || return 1
    fi
    [ "$HA_RUNNING" = 0 ] && return 1
    [ $# -gt 0 ] && "$@" && return 1
    [ "$HA_RUNNING" = 1 ] && [ "${HA_CHECKPOINT:-0}" -ge "$k" ] && break
    sleep 0.005
  done
  [ -n "$victim" ] || return 1
  kill -9 "$victim" 2>/dev/null || return 1   # this process only, by its PID
  HA_VICTIM=$victim
}

# ha_kill_after_lines VICTIM OUT PATTERN K: kills VICTIM (kill -9) once OUT
# holds K lines matching PATTERN (seen, not guessed from time). Returns 1
# when VICTIM ended first.
ha_kill_after_lines() {
  local victim=$1 out=$2 pattern=$3 k=$4 n
  for _ in $(seq 6000); do
    n=$(grep -c -- "$pattern" "$out" 2>/dev/null || true)
    [ "${n:-0}" -ge "$k" ] && break
    kill -0 "$victim" 2>/dev/null || return 1
    sleep 0.02
  done
  kill -9 "$victim" 2>/dev/null || return 1   # this process only, by its PID
}

# ha_kill_primary_at_checkpoint JID RANK MAX: kills task RANK's primary
# vmha once its backup acknowledged a random checkpoint K (1 <= K <= MAX)
# of the running program (ha_kill_at_checkpoint): for programs that print
# only at their end. The primary is the one whose --stats-file is that
# task's (its path names the job and the task). Returns 1 when the primary
# or its program had ended first.
ha_kill_primary_at_checkpoint() {
  local jid=$1 rank=$2 max=$3 k
  k=$(( 1 + $(od -An -N2 -tu2 /dev/urandom) % max ))
  ha_kill_at_checkpoint "$HA_DIR/state/job$jid/step*.task$rank/primary.stats" "$k" || return 1
  note "job $jid: killed the primary vmha of task $rank (pid $HA_VICTIM) once its backup held checkpoint $HA_CHECKPOINT (wanted $k of 1..$max)"
}

# ha_kill_primary_mid_run JID OUT RANK TOTAL: once the primary vmha of task
# RANK runs and OUT shows that task past a random line K (2 <= K <= TOTAL/3),
# kills it (ha_kill_after_lines); with HA_KILL_ON=checkpoints, once its
# backup acknowledged checkpoint 1..TOTAL of the running program instead
# (ha_kill_primary_at_checkpoint). Returns 1 when the primary had ended first.
ha_kill_primary_mid_run() {
  local jid=$1 out=$2 rank=$3 total=$4 victim="" k
  if [ "${HA_KILL_ON:-lines}" = checkpoints ]; then
    ha_kill_primary_at_checkpoint "$jid" "$rank" "$total"
    return
  fi
  for _ in $(seq 600); do
    victim=$(ha_pids "$jid" "^[^ ]*/vmha run --backup" | awk -v r="$rank" '$2 == r {print $1}' | head -n1)
    [ -n "$victim" ] && break
    sleep 0.05
  done
  [ -n "$victim" ] || { ha_dump "$jid"; fail "job $jid: the primary vmha of task $rank never appeared"; }
  k=$(( 2 + $(od -An -N2 -tu2 /dev/urandom) % (total / 3 - 1) ))
  ha_kill_after_lines "$victim" "$out" "^ *$rank: step" "$k" || return 1
  note "job $jid: killed the primary vmha of task $rank (pid $victim) once line $k of $total was out; $(grep -c "^ *$rank: step" "$out" || true) of its lines were out"
}

# ha_failover_round NAME RANK SBATCH-OPTION NATIVE TOTAL COMMAND: runs
# `sbatch SBATCH-OPTION -N2 --wrap COMMAND` (its output in NAME.out) and kills
# task RANK's primary mid-run (ha_kill_primary_mid_run; TOTAL: the lines per
# task, with HA_KILL_ON=checkpoints the last checkpoint to kill after, a
# quarter of it after each kill that came after the program's end). The
# job must end COMPLETED 0:0 with every task's output equal to the file
# NATIVE, AdminComment failovers=1 and the takeover's cause in slurmd's
# log. A kill that came after the program had ended (no takeover) is tried
# again, 3 attempts in all.
ha_failover_round() {
  local name=$1 rank=$2 opt=$3 native=$4 total=$5 cmd=$6 jid st acct t0 t1 try
  for try in 1 2 3; do
    t0=$(date +%s.%N)
    jid=$(sbatch --parsable "$opt" -N2 -o "$name.out" --wrap "$cmd")
    if ! ha_kill_primary_mid_run "$jid" "$name.out" "$rank" "$total"; then
      # it must have ended clean: a primary that died unkilled is a fault
      st=$(ha_wait_end 90 "$jid")
      acct=$(ha_wait_accounting 20 "$jid")
      ha_compare_tasks "$name.out" "$native" 0 1
      case "$acct" in
        "COMPLETED|0:0|vmha: tasks=2 "*" failovers=0") ;;
        *) ha_dump "$jid"; fail "$name: job $jid ended $st before the kill, and not clean: accounting '$acct'" ;;
      esac
      note "$name: the primary of task $rank ended before the kill; again"
      # after a checkpoint: this run took fewer than counted (async sort
      # takes 2 to 40), so a quarter of the range, down to checkpoint 1
      # (before the program's first instruction)
      [ "${HA_KILL_ON:-lines}" = checkpoints ] && total=$(( total > 4 ? total / 4 : 1 ))
      continue
    fi
    st=$(ha_wait_end 90 "$jid")
    t1=$(date +%s.%N)
    [ "$st" = COMPLETED ] || { tail -n 5 "$name.out"; ha_dump "$jid"; fail "$name: job $jid ended $st"; }
    ha_compare_tasks "$name.out" "$native" 0 1
    acct=$(ha_wait_accounting 20 "$jid")
    case "$acct" in
      "COMPLETED|0:0|vmha: tasks=2 "*" failovers=1")
        # slurmd's log says why the backup took over (task RANK's slurmstepd)
        grep -q "vmha: job $jid step0.task$rank: the primary vmha on node[0-9]* was killed by signal 9 " \
          "$CLUSTER_DIR"/log/slurmd-node*.log || { ha_dump "$jid"; fail "$name: no takeover cause in slurmd's log"; }
        note "$name: job $jid in $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s, outputs exact; sacct: $acct"
        return 0 ;;
      "COMPLETED|0:0|vmha: tasks=2 "*" failovers=0")
        note "$name: outputs exact, but the kill came after the program had ended (no takeover); again"
        [ "${HA_KILL_ON:-lines}" = checkpoints ] && total=$(( total > 4 ? total / 4 : 1 )) ;;
      *) ha_dump "$jid"; fail "$name: accounting '$acct'" ;;
    esac
  done
  fail "$name: no attempt killed the primary while its program ran"
}
