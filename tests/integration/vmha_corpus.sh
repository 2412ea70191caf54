#!/bin/sh
# The corpus of real programs (tests/vmha_corpus/corpus.list: PyTorch
# training, numpy with OpenBLAS threads, make -j2 with gcc, sqlite3
# transactions, git, tar with gzip, multiprocessing, perl, pip, sort spilling
# to /tmp, a bash script with sleeps), each in a fresh working directory:
# natively, under `vmha run`, and replicated (`vmha run --backup`, async and
# stop-copy in turn) with the primary killed -9 once the backup holds a
# random checkpoint of the running program. Every vmha run must exit as the
# native one, print the same bytes (each line exactly once after the
# failover) and leave the same files, byte for byte, with nothing of vmha's
# own left behind (.vmha/). VMHA_CORPUS=NAME,... runs only those.
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
CORPUS="$top_srcdir/tests/vmha_corpus"
vmha_repl_setup
cd "$T" || exit 1
BACKUP_POLICY="--workdir $T/job"  # start_backup: a resumed guest works where the primary did
fail=0

# A working directory with the corpus's files ($1).
fresh() { rm -rf "$1" && mkdir "$1" && cp "$CORPUS"/*.py "$CORPUS"/*.sh "$CORPUS"/*.pl "$1"/; }

# The files of working directory $1 as "digest path" lines, less the paths
# in $2 (space-separated).
files_of() {
  (cd "$1" && find . -type f | sort | while read -r f; do
    case " $2 " in *" ${f#./} "*) continue ;; esac
    printf '%s %s\n' "$(sha256sum < "$f" | cut -c1-16)" "$f"
  done)
}

# compare WHAT RC OUTFILE DIR: against the native run's exit status, output and files.
compare() {
  if [ "$2" != "$NRC" ]; then
    echo "FAIL: $NAME ($1): exit $2, natively $NRC"; tail -5 "$T/err.${1%%,*}"; fail=1; return 1
  fi
  if ! cmp -s native.out "$3"; then
    echo "FAIL: $NAME ($1): output differs from the native run's:"; diff native.out "$3" | head -5
    tail -5 "$T/err.${1%%,*}"; fail=1; return 1
  fi
  files_of "$4" "$IGNORE" > files.run
  if ! cmp -s native.files files.run; then
    echo "FAIL: $NAME ($1): files differ from the native run's:"; diff native.files files.run | head -8; fail=1
    return 1
  fi
  return 0
}

# replicated MODE KILL_AT: the program under `vmha run --backup` in ./job
# (10 ms epochs), its output in ./repl.out; with KILL_AT > 0 the primary is
# killed -9 once the backup acknowledged that checkpoint of the running
# program. Sets RRC (the exit status seen: the primary's, or the backup's
# after a takeover), EPOCHS and TOOK (1 when the backup resumed the program).
replicated() {
  fresh job; : > repl.out; rm -f primary.stats; : > "$T/backup.err"
  start_backup "$T/repl.out"
  (cd job && exec "$VMHA" run --mode "$1" --epoch-ms 10 --backup "$ADDR" --key "$T/key" \
    --stats-file ../primary.stats -- $CMD < /dev/null >> ../repl.out 2> "$T/err.$1") &
  PRIMARY_PID=$!
  TOOK=0
  if [ "$2" -gt 0 ] && wait_checkpoint "$2"; then
    kill -9 $PRIMARY_PID 2>/dev/null
  fi
  wait $PRIMARY_PID 2>/dev/null; _prc=$?; PRIMARY_PID=
  wait_bounded "$BACKUP_PID" 300; _brc=$WAIT_RC; BACKUP_PID=
  EPOCHS=$(stats_value primary.stats epochs)
  if backup_took_over; then
    TOOK=1; RRC=$_brc; cat "$T/backup.err" >> "$T/err.$1"
  else
    RRC=$_prc
  fi
}

grep -v '^#' "$CORPUS/corpus.list" > corpus.list
while IFS='|' read -r NAME CMD IGNORE; do
  NAME=$(echo $NAME); CMD=$(echo $CMD); IGNORE=$(echo $IGNORE)
  [ -n "$NAME" ] || continue
  case ",${VMHA_CORPUS:-$NAME}," in *",$NAME,"*) ;; *) continue ;; esac
  prog=${CMD%% *}; [ "$prog" = /usr/bin/env ] && prog=$(echo "$CMD" | tr ' ' '\n' | grep '^/' | sed -n 2p)
  [ -x "$prog" ] || { echo "FAIL: $NAME: $prog is not installed (contrib/setup.sh installs it)"; fail=1; continue; }
  # natively
  fresh job; (cd job && exec $CMD < /dev/null > ../native.out 2> "$T/err.native"); NRC=$?
  files_of job "$IGNORE" > native.files
  [ "$NRC" = 0 ] || { echo "FAIL: $NAME does not run natively (exit $NRC)"; tail -5 "$T/err.native"; fail=1; continue; }
  # vmha run
  fresh job; (cd job && exec "$VMHA" run -- $CMD < /dev/null > ../run.out 2> "$T/err.run"); RC=$?
  compare run $RC run.out job && echo "ok: $NAME under vmha run"
  # replicated, no kill, then a kill at a random checkpoint of the running program
  for MODE in async stop-copy; do
    replicated $MODE 0
    compare "$MODE" $RRC repl.out job || continue
    E=${EPOCHS:-2}
    KMAX=$(( (E - 1) * 2 / 3 )); [ "$KMAX" -ge 1 ] || KMAX=1
    K=$(( $(od -An -N2 -tu2 /dev/urandom) % KMAX + 1 ))
    replicated $MODE $K
    compare "$MODE, kill -9 after checkpoint $K" $RRC repl.out job || continue
    echo "ok: $NAME replicated ($MODE): $E checkpoints without a kill; killed after checkpoint $K,$([ $TOOK = 1 ] && echo ' taken over' || echo ' ended first')"
  done
done < corpus.list
exit $fail
