# Helpers for the vmha replication tests (sourced). Needs top_builddir.
VMHA="$top_builddir/vmha/vmha"
WL="$top_builddir/vmha/workloads"
. "$top_srcdir/tests/integration/steps_size.sh"
. "$top_srcdir/tests/integration/require_kvm.sh"

vmha_repl_require() {
  require_kvm
  [ -x "$VMHA" ] || { echo "FAIL: $VMHA not built"; exit 1; }
}

# A fresh work directory with a key; sets T.
vmha_repl_setup() {
  T=$(mktemp -d "${TMPDIR:-/tmp}/vmha-repl.XXXXXX")
  trap 'vmha_repl_cleanup' EXIT
  head -c 32 /dev/urandom > "$T/key"
  chmod 600 "$T/key"
}

vmha_repl_cleanup() {
  for p in $BACKUP_PID $PRIMARY_PID; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$T"
}

# Starts a backup writing stdout to $1 (appending); sets BACKUP_PID, ADDR.
# $POLICY (read-only path options, vmha(1) CONFINEMENT) goes to the backup
# and, in kill_round, to the primary; $BACKUP_POLICY replaces it for the backup.
start_backup() {
  rm -f "$T/addr" "$T/backup.stats"
  "$VMHA" backup --key "$T/key" --lease-ms "${LEASE_MS:-1000}" --accept-timeout 20 \
    --address-file "$T/addr" --stats-file "$T/backup.stats" ${FENCE:+--fence-cmd "$FENCE"} ${BACKUP_POLICY:-$POLICY} >> "$1" 2>> "$T/backup.err" &
  BACKUP_PID=$!
  for _ in $(seq 1500); do [ -s "$T/addr" ] && break; sleep 0.02; done
  [ -s "$T/addr" ] || { echo "FAIL: backup did not listen"; cat "$T/backup.err"; exit 1; }
  ADDR=$(cat "$T/addr")
}

# KEY's value in the --stats-file FILE (vmha(1)): `stats_value FILE KEY`;
# empty when the file or the key is not there. What vmha reports as data:
# its log lines are for people, and no test parses them.
stats_value() { sed -n "s/^$2=//p" "$1" 2>/dev/null; }

# Whether the last backup started took over: its --stats-file says
# takeover=1, written before the program resumes.
backup_took_over() { [ "$(stats_value "$T/backup.stats" takeover)" = 1 ]; }

# Waits for child $1 at most $2 seconds (then kills it); sets WAIT_RC.
# Polls from this shell: a watcher subshell killed right after its fork can
# still run this shell's EXIT trap (bash resets traps only after the fork),
# which removed $T in the middle of a test.
wait_bounded() {
  _left=$(($2 * 50))
  while [ "$_left" -gt 0 ] && kill -0 "$1" 2>/dev/null; do
    sleep 0.02
    _left=$((_left - 1))
  done
  [ "$_left" -gt 0 ] || kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  WAIT_RC=$?
}

# Waits until ./out holds $1 lines (output comes out per acknowledged epoch,
# late on a loaded host); false if the primary ended first.
wait_lines() {
  for _ in $(seq 6000); do
    [ "$(wc -l < out)" -ge "$1" ] && return 0
    kill -0 "$PRIMARY_PID" 2>/dev/null || return 1
    sleep 0.005
  done
}

# The checkpoint of the running program the backup last acknowledged, from
# the primary's --stats-file ./primary.stats (running=1, checkpoints=N while
# it runs, vmha(1)); empty once the program ended.
acked_checkpoint() {
  [ "$(stats_value primary.stats running)" = 1 ] || return 0
  stats_value primary.stats checkpoints
}

# Waits until the backup acknowledged checkpoint $1 of the running program
# (a program that prints only at its end shows nothing else); false once
# the primary or its program ended first.
wait_checkpoint() {
  for _ in $(seq 12000); do
    _c=$(acked_checkpoint)
    [ -n "$_c" ] && [ "$_c" -ge "$1" ] && return 0
    kill -0 "$PRIMARY_PID" 2>/dev/null || return 1
    [ -s primary.stats ] && [ -z "$_c" ] && return 1
    sleep 0.005
  done
  return 1
}

# kill_round I MAX PROGRAM ARGS...: round I of a kill -9 test, in the
# current directory: async on odd rounds, stop-copy on even ones (10 ms
# epochs); a backup appending to ./out, the primary on PROGRAM appending to
# ./out too, killed once 1..MAX lines are out (so kills fall into different
# epochs) or, with KILL_ON=checkpoints, once the backup acknowledged
# checkpoint 1..MAX of the running program (MAX_async and MAX_stop_copy, per
# mode, when set; a quarter of it after a kill that came after the
# program's end), then the backup waited for. Sets MODE, BRC (the backup's
# exit status) and TOOK_THREADS (the guest threads the takeover resumed, ""
# when it did not take over, 0 when the program had ended); counts a
# takeover in RESUMED.
kill_round() {
  _i=$1 _max=$2
  shift 2
  MODE=async; [ $((_i % 2)) -eq 0 ] && MODE=stop-copy
  : > out; : > "$T/backup.err"; rm -f primary.stats
  start_backup "$PWD/out"
  "$VMHA" run --memory 256 --mode $MODE --epoch-ms 10 --backup "$ADDR" --key "$T/key" \
    --stats-file primary.stats $POLICY -- "$@" >> out 2> primary.err &
  PRIMARY_PID=$!
  if [ "${KILL_ON:-lines}" = checkpoints ]; then
    _m=MAX_$(echo $MODE | tr - _)
    eval "_max=\${$_m:-\$_max}"
    wait_checkpoint $(( $(od -An -N2 -tu2 /dev/urandom) % _max + 1 ))
  else
    wait_lines $(( $(od -An -N2 -tu2 /dev/urandom) % _max + 1 ))
  fi
  kill -9 $PRIMARY_PID 2>/dev/null
  wait $PRIMARY_PID 2>/dev/null; PRIMARY_PID=
  wait_bounded "$BACKUP_PID" 60; BRC=$WAIT_RC; BACKUP_PID=
  TOOK_THREADS=
  if backup_took_over; then
    RESUMED=$((RESUMED + 1))
    TOOK_THREADS=$(stats_value "$T/backup.stats" threads)
  fi
  # A kill after the program's end: this run took fewer checkpoints than
  # counted (async sort takes 2 to 40 of them, as its pre-copies fall), so
  # aim at a quarter of the range next time, down to checkpoint 1, which
  # comes before the program's first instruction.
  if [ "${KILL_ON:-lines}" = checkpoints ] && [ "${TOOK_THREADS:-0}" = 0 ]; then
    eval "$_m=$(( _max > 4 ? _max / 4 : 1 ))"
  fi
  return 0
}

# check_replicated NAME PROGRAM ARGS...: PROGRAM under `vmha run --backup`
# in both modes (20 ms epochs, a fresh backup each) must exit and print as it
# does natively, and its backup exit with the same status. Sets fail=1 if not.
check_replicated() {
  _name=$1; shift
  "$@" > native.out 2>/dev/null; _nrc=$?
  for _mode in async stop-copy; do
    : > repl.out
    start_backup "$T/backup.out"
    "$VMHA" run --memory 1024 --mode $_mode --epoch-ms 20 --backup "$ADDR" --key "$T/key" -- "$@" \
      > repl.out 2> primary.err
    _rc=$?
    wait_bounded "$BACKUP_PID" 120; _brc=$WAIT_RC; BACKUP_PID=
    if [ "$_rc" != "$_nrc" ] || ! cmp -s native.out repl.out; then
      echo "FAIL: $_name ($_mode): exit $_rc (native $_nrc), output differs"; cat primary.err; fail=1
    elif [ "$_brc" != "$_nrc" ]; then
      echo "FAIL: $_name ($_mode): backup exit $_brc, expected $_nrc"; fail=1
    else
      echo "ok: $_name ($_mode)"
    fi
  done
}

# checkpoint_range NATIVE PROGRAM ARGS...: PROGRAM run once per mode as
# kill_round runs it, without a kill, must exit 0 and print NATIVE; sets
# MAX_async and MAX_stop_copy for KILL_ON=checkpoints to two thirds of the
# checkpoints of the running program it took (at least 1). Counted, not
# guessed: epochs are 10 ms of wall time, so a loaded host makes more of
# them. Sets fail=1 if not.
checkpoint_range() {
  _native=$1; shift
  for _mode in async stop-copy; do
    : > repl.out; rm -f primary.stats
    start_backup "$T/backup.out"
    "$VMHA" run --memory 256 --mode $_mode --epoch-ms 10 --backup "$ADDR" --key "$T/key" \
      --stats-file primary.stats $POLICY -- "$@" > repl.out 2> primary.err
    _rc=$?
    wait_bounded "$BACKUP_PID" 60; _brc=$WAIT_RC; BACKUP_PID=
    _e=$(stats_value primary.stats epochs)
    if [ "$_rc" != 0 ] || [ "$_brc" != 0 ] || ! cmp -s "$_native" repl.out || [ "$(stats_value primary.stats backup_lost)" != 0 ]; then
      echo "FAIL: $1 ($_mode) without a kill: exit $_rc, backup exit $_brc, output $(cmp -s "$_native" repl.out && echo equal || echo differs) to native"
      cat primary.err primary.stats; tail -3 "$T/backup.err"; fail=1
    fi
    _m=$(( (${_e:-2} - 1) * 2 / 3 )); [ "$_m" -ge 1 ] || _m=1
    eval "MAX_$(echo $_mode | tr - _)=$_m"
    echo "$1 ($_mode), no kill: ${_e:-?} checkpoints; kills after checkpoint 1..$_m"
  done
}

# kill_loop WHAT KILLS TRIES MAXLINES NATIVE PROGRAM ARGS...: kill_round until
# KILLS kills have hit a running primary, at most TRIES rounds; each round's
# released output must equal the file NATIVE and the backup exit 0. With
# KILL_THREADS=N, a kill counts only when the takeover resumed the program
# mid-run with at least N guest threads, and one that resumed it with fewer
# (but not finished) fails. Sets fail=1 if not; leaves RESUMED, THREADED
# (takeovers with KILL_THREADS threads or more) and KILL_TRIES (the rounds run).
kill_loop() {
  _what=$1 _kills=$2 _tries=$3 _lines=$4 _native=$5; shift 5
  RESUMED=0 THREADED=0 KILL_TRIES=0
  _hits=0
  while [ "$_hits" -lt "$_kills" ] && [ $KILL_TRIES -lt "$_tries" ]; do
    KILL_TRIES=$((KILL_TRIES + 1))
    kill_round $KILL_TRIES "$_lines" "$@"
    if ! cmp -s "$_native" out || [ "$BRC" != 0 ]; then
      echo "FAIL: $_what, kill $KILL_TRIES ($MODE): backup exit $BRC; diff native vs released:"
      diff "$_native" out | head -5; head -5 "$T/backup.err"; echo "primary's stderr:"; tail -5 primary.err
      fail=1
    fi
    if [ "${KILL_THREADS:-0}" -gt 0 ] && [ -n "$TOOK_THREADS" ]; then
      if [ "$TOOK_THREADS" -ge "$KILL_THREADS" ]; then
        THREADED=$((THREADED + 1))
      elif [ "$TOOK_THREADS" -gt 0 ]; then
        echo "FAIL: $_what, kill $KILL_TRIES ($MODE): the takeover resumed $TOOK_THREADS guest threads, not $KILL_THREADS"
        fail=1
      fi
    fi
    _hits=$RESUMED
    [ "${KILL_THREADS:-0}" -gt 0 ] && _hits=$THREADED
  done
  if [ "${KILL_THREADS:-0}" -gt 0 ]; then
    echo "ok: $_what: $KILL_TRIES kills of the primary ($RESUMED resumed on the backup, $THREADED of them mid-run with $KILL_THREADS or more guest threads), output exactly once"
  else
    echo "ok: $_what: $KILL_TRIES kills of the primary ($RESUMED resumed on the backup, the others had finished), output exactly once"
  fi
  [ "$_hits" -ge "$_kills" ] ||
    { echo "FAIL: $_what: only $_hits of $KILL_TRIES kills hit a running primary ($_kills wanted)"; fail=1; }
}
