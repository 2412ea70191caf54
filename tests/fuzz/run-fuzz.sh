#!/bin/sh
# Runs each fuzz target for a bounded time and prints a summary table:
# executions (libFuzzer's stat::number_of_executed_units), coverage (cov: edges,
# ft: features, from its last status line) and crashes. Exits 1 if any target
# found a crash, leak, timeout or out-of-memory input.
#
#   run-fuzz.sh FUZZ_DIR TOP_SRCDIR SECONDS TARGET...
#
# FUZZ_FLAGS in the environment adds libFuzzer flags (-jobs, -dict, ...).
#
# Seeds come from TOP_SRCDIR/tests/fuzz/corpus/<target> and every crash ever
# found from .../crashes/<target> (both only read); new corpus entries go to
# FUZZ_DIR/corpus/<target>, crashing inputs to FUZZ_DIR/crashes/<target>,
# libFuzzer's output to FUZZ_DIR/logs/<target>.log.
set -u
fuzz_dir=$1 src=$2 seconds=$3
shift 3

summary="$fuzz_dir/summary.txt"
mkdir -p "$fuzz_dir/logs"
printf '%-12s %12s %8s %8s %8s  %s\n' target executions cov ft crashes status > "$summary"
failed=0
for t in "$@"; do
  corpus="$fuzz_dir/corpus/$t" crashes="$fuzz_dir/crashes/$t" log="$fuzz_dir/logs/$t.log"
  mkdir -p "$corpus" "$crashes"
  stamp="$fuzz_dir/logs/$t.start"
  touch "$stamp"   # crashes of earlier runs stay in $crashes, not counted again
  echo "fuzz: $t for ${seconds}s (log: $log)" >&2
  # The first corpus directory receives new entries; the others are read.
  "$fuzz_dir/bin/$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$crashes/" ${FUZZ_FLAGS:-} \
    "$corpus" "$src/tests/fuzz/corpus/$t" "$src/tests/fuzz/crashes/$t" > "$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  last=$(grep ' cov: ' "$log" | tail -n 1)
  cov=$(printf '%s\n' "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
  ft=$(printf '%s\n' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  found=$(find "$crashes" -type f -newer "$stamp" \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  status=ok
  if [ "$rc" -ne 0 ] || [ "$found" -gt 0 ]; then
    status="FOUND (exit $rc, see $log)"
    failed=1
  fi
  printf '%-12s %12s %8s %8s %8s  %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$found" "$status" >> "$summary"
done
echo
cat "$summary"
if [ "$failed" -ne 0 ]; then
  echo
  echo "fuzz: crashing inputs are in $fuzz_dir/crashes/<target>; reproduce one with"
  echo "  $fuzz_dir/bin/<target> FILE"
  echo "and, once fixed, add it to tests/fuzz/crashes/<target>/ (tests/fuzz/README.md)."
  exit 1
fi
