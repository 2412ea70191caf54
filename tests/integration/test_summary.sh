#!/usr/bin/env bash
# contrib/test-summary, whose last line CI reads: on a planted build tree it
# counts a Check suite by its tests (those that said "SKIP: <test>: <reason>"
# as skipped), any other test by Automake's result
# (XFAIL as skipped, XPASS as failed, a suite that died before its summary
# as one failure), and prints the end of each failed test's log before that
# line, so a run whose output keeps only its end still says why.
. "$(dirname "$0")/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/duet-summary.XXXXXX")
trap 'rm -rf "$T"' EXIT

# plant NAME RESULT [LOG LINE...]: NAME.trs with RESULT, NAME.log with the lines
plant() {
  local n=$1 r=$2; shift 2
  mkdir -p "$(dirname "$T/$n")"
  printf ':test-result: %s\n' "$r" > "$T/$n.trs"
  printf '%s\n' "$@" > "$T/$n.log"
}
plant tests/unit/check_a PASS "100%: Checks: 7, Failures: 0, Errors: 0"
plant tests/unit/check_b FAIL "80%: Checks: 5, Failures: 1, Errors: 0" "check_b.cc:12:F:core:t1:0: wrong answer"
plant tests/unit/check_skips PASS "Running suite(s): skips" "SKIP: needs_python: /usr/bin/python3 is missing" \
  "SKIP: needs_root: needs root" "note: SKIP: not a marker" "100%: Checks: 4, Failures: 0, Errors: 0"
plant tests/unit/check_died FAIL "Running suite(s): died" "Segmentation fault"
plant tests/integration/ok.sh PASS "ok: fine"
plant tests/integration/skipped.sh SKIP "SKIP: no /dev/kvm"
plant tests/integration/known.sh XFAIL "a known failure"
mapfile -t filler < <(seq -f "filler %g" 30)
plant tests/integration/bad.sh FAIL "${filler[@]}" "FAIL: job 7 ended TIMEOUT"
plant tests/integration/lucky.sh XPASS "passed unexpectedly"
mkdir -p "$T/tests/unit/.deps" && printf ':test-result: FAIL\n' > "$T/tests/unit/.deps/x.trs"

out=$(bash "$top_srcdir/contrib/test-summary" "$T")
last=$(printf '%s\n' "$out" | tail -n1)
[ "$last" = "14 passed, 4 failed, 4 skipped" ] || fail "summary line: '$last' (all: $out)"
for t in tests/unit/check_b tests/unit/check_died tests/integration/bad.sh tests/integration/lucky.sh; do
  grep -qxF -- "---- the end of $t.log ----" <<<"$out" || fail "no log end for $t: $out"
done
grep -qxF "FAIL: job 7 ended TIMEOUT" <<<"$out" || fail "bad.sh's last line is not shown: $out"
grep -qx "filler 10" <<<"$out" && fail "more than the end of bad.sh's log is shown: $out"
grep -q "check_a\|check_skips\|ok.sh\|skipped.sh\|known.sh" <<<"$out" && fail "a test that did not fail is shown: $out"
mkdir "$T/empty"
[ "$(bash "$top_srcdir/contrib/test-summary" "$T/empty" 2>&1)" = "0 passed, 0 failed, 0 skipped" ] \
  || fail "an empty tree does not give a zero line"
echo "ok: test-summary counts Check tests and Automake results and shows the end of each failed log before its line"
