#!/usr/bin/env bash
# contrib/compare-slurm's slice choice (--slice-only: no Slurm, no root): the
# offered load of a window is its jobs' GPU-seconds, work capped at
# --max-duration, at the 16-node cluster's mean known speed over 64 GPUs x the
# window's submit span; --load picks the first window closest to it, --skip
# takes a window as given; then the simulator's room line.
. "$(dirname "$0")/lib.sh"
: "${top_builddir:=$top_srcdir/build}"
[ -x "$top_builddir/duet" ] && [ -x "$top_builddir/duet-emujob" ] || skip "duet or duet-emujob not built in $top_builddir"
T=$(mktemp -d "${TMPDIR:-/tmp}/duet-compare-slice.XXXXXX")
trap 'rm -rf "$T"' EXIT
slice() { "$top_srcdir/contrib/compare-slurm" --build "$top_builddir" --slice-only --trace "$T/trace.csv" --jobs 4 \
            --out "$T/out" "$@" 2>"$T/err" | grep '^Slice:' || fail "no Slice line ($*): $(cat "$T/err")"; }

# windows of 4 jobs: job 3's 5,000 s are capped at 1,800 (x 4 GPUs); job 5 has 8 GPUs
{ echo job_id,submit,duration,num_gpus
  echo 1,0,100,1; echo 2,10,100,1; echo 3,20,5000,4; echo 4,30,100,1
  echo 5,40,100,8; echo 6,50,100,1; echo 7,60,100,1; echo 8,80,100,1; } > "$T/trace.csv"

# rows 1-4: (100 + 4 x 1800 + 100 + 100) / (0.6899 x 64 x 30 s) = 5.662, the mean
# speed being the GPU-weighted mean of duet-emujob --known-speeds on the 16 nodes
out=$(slice --no-sim --skip 0)
grep -qF -- '--skip 0 (given; trace rows 1-4), offered load 5.662 (span 30 trace s' <<< "$out" || fail "skip 0: $out"
out=$(slice --no-sim --skip 4)   # rows 5-8: 1,100 GPU-s over 40 s
grep -qF -- 'offered load 0.623 (span 40' <<< "$out" || fail "skip 4: $out"
out=$(slice --no-sim --load 1)   # closest: rows 4-7 at 0.830
grep -qF -- '--skip 3 (trace rows 4-7), offered load 0.830 (closest to --load 1;' <<< "$out" || fail "load 1: $out"
out=$(slice --no-sim --load 7)   # rows 2-5 and 3-6 tie at 6.190: the first
grep -qF -- '--skip 1 (trace rows 2-5), offered load 6.190' <<< "$out" || fail "load 7: $out"
out=$(slice --no-sim --load 1 --max-duration 0)   # uncapped: job 3 alone makes rows 1-4 heavier
grep -qF -- '--skip 3 ' <<< "$out" || fail "load 1 uncapped: $out"
set +e; "$top_srcdir/contrib/compare-slurm" --build "$top_builddir" --slice-only --no-sim --trace "$T/trace.csv" \
  --jobs 4 --skip 5 --out "$T/out" >/dev/null 2>"$T/err"; rc=$?; set -e
[ $rc = 1 ] && grep -q 'no window of 4 jobs from --skip 5' "$T/err" || fail "skip past the end: exit $rc, $(cat "$T/err")"
# --build relative to where it runs (slurm.conf's PluginDir gets it absolute), and a missing one
b=$(cd "$top_builddir" && pwd)
out=$(cd "$(dirname "$b")" && "$top_srcdir/contrib/compare-slurm" --build "$(basename "$b")" --slice-only --no-sim \
        --trace "$T/trace.csv" --jobs 4 --skip 4 --out "$T/out" 2>"$T/err" | grep '^Slice:') \
  || fail "relative --build: $(cat "$T/err")"
set +e; "$top_srcdir/contrib/compare-slurm" --build "$T/no-such-build" --slice-only --no-sim --trace "$T/trace.csv" \
  >/dev/null 2>"$T/err"; rc=$?; set -e
[ $rc = 1 ] && grep -q -- '--build: no such directory' "$T/err" || fail "missing --build: exit $rc, $(cat "$T/err")"
note "loads: 5.662 (rows 1-4), 0.623 (rows 5-8), --load 1 -> rows 4-7"

# with the simulator: four policies, the oracle's room, results.md
slice --load 1 >/dev/null
grep -q '^Room: srtf-oracle/fastest-first reaches [0-9.]*x fifo/first-fit' "$T/out/results.md" \
  || fail "no room line: $(cat "$T/out/results.md" "$T/err")"
[ "$(grep -c '^| \(fifo/first-fit\|multifactor/first-fit\|duet/duet\|srtf-oracle/fastest-first\) |' "$T/out/results.md")" = 4 ] \
  || fail "expected four simulator rows: $(cat "$T/out/results.md")"
note "$(grep '^Room:' "$T/out/results.md")"
echo "ok: compare-slurm chooses its slice by offered load"
