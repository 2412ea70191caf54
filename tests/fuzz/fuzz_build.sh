#!/usr/bin/env bash
# make fuzz's targets build and link. fuzz.mk compiles each one with
# clang++-14, libFuzzer and the sanitizers from its own source lists, which
# the replays in make check (linked against the project's libraries) never
# exercise: a list that missed a file once broke `make fuzz` unnoticed.
. "$top_srcdir/tests/integration/lib.sh"
clangxx=$(sed -n 's/^CLANGXX = //p' "$top_builddir/Makefile")
[ -n "$clangxx" ] || skip "clang++-14 was not found by configure (apt-get install clang-14 libfuzzer-14-dev)"
targets=$(sed -n 's/^FUZZ_TARGETS ?= //p' "$top_srcdir/tests/fuzz/fuzz.mk")
[ -n "$targets" ] || fail "no FUZZ_TARGETS list in tests/fuzz/fuzz.mk"
log=$(mktemp "${TMPDIR:-/tmp}/duet-fuzz-build.XXXXXX")
trap 'rm -f "$log"' EXIT
make -C "$top_builddir" --no-print-directory fuzz-build > "$log" 2>&1 \
  || fail "make fuzz-build failed: $(grep -m5 -E 'error|undefined reference' "$log")"
n=0
for t in $targets; do
  [ -x "$top_builddir/fuzz/bin/$t" ] || fail "make fuzz-build left no fuzz/bin/$t"
  n=$((n + 1))
done
echo "PASS: all $n fuzz targets build with $clangxx and libFuzzer"
