#!/bin/sh
# Fault injection on Debian's coreutils as users run them, dynamically
# linked (ld.so and libc in guest memory), one program per vmha run (no
# pipes between guests yet): sort -n of 200,000 shuffled numbers, gzip -c of
# that file (the released bytes equal native gzip's and gzip -t accepts
# them) and md5sum of a 51 MB file. They print only at their end, so the
# primary is killed -9 once the backup acknowledged a random checkpoint of
# the running program (KILL_ON=checkpoints: the primary's --stats-file,
# vmha(1)), not once lines are out; in both modes. Each kill counts only when
# the takeover resumed the program mid-run; the backup must finish it: its
# output exactly once, equal to native, exit status 0. A few kills per
# program here (VMHA_FAILOVER_COREUTILS_KILLS, default 3);
# VMHA_FAILOVER_COREUTILS_KILLS=50 runs the full loop.
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
for p in /usr/bin/sort /usr/bin/gzip /usr/bin/md5sum /usr/bin/shuf; do
  [ -x "$p" ] || { echo "SKIP: $p is not installed"; exit 77; }
done
vmha_repl_setup
cd "$T" || exit 1
KILLS=${VMHA_FAILOVER_COREUTILS_KILLS:-3}
FENCE="true"
LEASE_MS=300
KILL_ON=checkpoints
KILL_THREADS=1  # a hit: the takeover resumed the program's thread, not its end
fail=0

# The inputs, the same bytes every run: a fixed random source for shuf.
seq 1 1000000 > random.src
seq 1 200000 | shuf --random-source=random.src > numbers.txt
for _ in $(seq 40); do cat numbers.txt; done > big.txt

# coreutils_loop NAME PROGRAM ARGS...: the native output, the checkpoints a
# run takes per mode, then the kills.
coreutils_loop() {
  _name=$1; shift
  "$@" > native.out || { echo "FAIL: $_name does not run natively"; fail=1; return; }
  _t0=$(date +%s)
  checkpoint_range native.out "$@"
  kill_loop "$_name" "$KILLS" $((KILLS * 3)) 0 native.out "$@"
  echo "$_name: $(( $(date +%s) - _t0 )) s"
}

coreutils_loop "sort -n" /usr/bin/sort -n numbers.txt
coreutils_loop "gzip -c" /usr/bin/gzip -c numbers.txt
# the last round's released bytes are a gzip stream that gzip itself accepts
gzip -t < out || { echo "FAIL: gzip -t refuses the output of the last gzip round"; fail=1; }
coreutils_loop md5sum /usr/bin/md5sum big.txt
exit $fail
