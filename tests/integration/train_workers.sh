#!/usr/bin/env bash
# duet train --workers 2 on one host: two runs with the same seed write the
# same model bytes, unlike one worker; only worker 0 prints; a worker that
# dies mid-run fails the whole run at once, naming it; --spread-sets reaches
# the model. Seconds of training.
. "$(dirname "$0")/lib.sh"
require_duet
T=$(mktemp -d "${TMPDIR:-/tmp}/duet-train-workers.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/train_lib.sh"
write_train_inputs "$T"

"$DUET" train "${TRAIN_ARGS[@]}" --episodes 2 --workers 2 --out "$T/a.duet" > "$T/a.out" 2> "$T/a.err" \
  || fail "duet train --workers 2 failed: $(cat "$T/a.err")"
"$DUET" train "${TRAIN_ARGS[@]}" --episodes 2 --workers 2 --out "$T/b.duet" > "$T/b.out" 2> "$T/b.err" \
  || fail "the second duet train --workers 2 failed: $(cat "$T/b.err")"
cmp -s "$T/a.duet" "$T/b.duet" || fail "two runs of --workers 2 with seed 4 wrote different models"
"$DUET" train "${TRAIN_ARGS[@]}" --episodes 2 --out "$T/one.duet" > /dev/null 2>&1 || fail "duet train (one worker) failed"
! cmp -s "$T/a.duet" "$T/one.duet" || fail "--workers 2 wrote the model one worker writes"
"$DUET" model info "$T/a.duet" | grep -q -- '--workers 2' || fail "the model's provenance does not say --workers 2"
# --spread-sets: every worker trains with the rule and the model keeps it (format 3)
"$DUET" train "${TRAIN_ARGS[@]}" --episodes 1 --workers 2 --spread-sets tight --out "$T/t.duet" > /dev/null 2> "$T/t.err" \
  || fail "duet train --spread-sets tight failed: $(cat "$T/t.err")"
"$DUET" model info "$T/t.duet" | grep -qx 'spread sets  tight' || fail "model info: $("$DUET" model info "$T/t.duet")"
"$DUET" model info "$T/t.duet" | grep -qx 'format       3' || fail "a tight model is not format 3"
"$DUET" model info "$T/a.duet" | grep -qx 'spread sets  fastest' || fail "a model trained without --spread-sets is not fastest"
[ "$(grep -c '^model ' "$T/a.out")" = 1 ] || fail "expected one report (worker 0's), got: $(cat "$T/a.out")"
# stderr holds worker 0's progress lines only ("duet train: PHASE I/N (run R/M): ..."),
# each once: the other workers are quiet unless they fail
other=$(grep -v '^duet train: [a-z]* [0-9]*/[0-9]* (run [0-9]*/[0-9]*): ' "$T/a.err" || true)
[ -z "$other" ] || fail "a worker wrote to stderr: $other"
twice=$(sed 's/): .*//' "$T/a.err" | sort | uniq -d)
[ -z "$twice" ] || fail "more than one worker reported progress: $twice"
grep -q '^duet train: ' "$T/a.err" || fail "no progress lines from worker 0 on stderr"
note "two runs of --workers 2: the same $(stat -c %s "$T/a.duet")-byte model"

# a worker killed mid-run: the run fails within the watcher's poll, naming it
"$DUET" train "${TRAIN_ARGS[@]}" --episodes 100000 --workers 2 --out "$T/k.duet" > "$T/k.out" 2> "$T/k.err" &
lead=$!
child=""
for _ in $(seq 600); do
  child=$(awk '{print $1}' "/proc/$lead/task/$lead/children" 2>/dev/null || true)
  [ -n "$child" ] && grep -qsz '^DUET_TRAIN_WORKER=1/2@' "/proc/$child/environ" && break
  child=""
  sleep 0.1
done
[ -n "$child" ] || { kill "$lead" 2>/dev/null || true; fail "worker 1 of --workers 2 never started: $(cat "$T/k.err")"; }
kill -KILL "$child"
rc=0
wait_bounded 60 "$lead" || rc=$?
[ "$rc" != 0 ] || fail "the run went on after its worker 1 was killed"
grep -q "worker 1 of 2 (pid $child) was killed by signal 9" "$T/k.err" \
  || fail "the run's error does not name the killed worker: $(cat "$T/k.err")"
note "worker 1 killed: exit $rc, '$(grep -m1 'worker 1 of 2' "$T/k.err")'"
echo "PASS: --workers 2 trains the same model twice, quietly, and fails at once when a worker dies"
