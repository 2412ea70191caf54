#!/bin/sh
# Fault injection on a process tree: bash running pipelines under
# `vmha run --backup`, the primary killed -9 in both modes. Each takeover
# restores the whole tree (every process, its memory, fds, the pipes with
# their bytes in flight, zombies) and the backup finishes it: every line
# exactly once and in order, the output equal to native, exit status 0.
#   numbered lines: seq | while read | cat -n, killed once 1..N lines are out
#   a child printing lines while adding into MAP_SHARED memory its parent
#   reads at the end (tests/vmha/fork_probe sharedlines): the takeover keeps
#   the memory shared, so the parent's sum is the native one
#   seq 1 200000 | sort -n | md5sum, killed after a random checkpoint (sort
#   spills to temporary files in TMPDIR, the working directory, and removes
#   them while open: a takeover reopens them where the primary held them,
#   vmha(1), Output commit)
# A few kills each here (VMHA_FAILOVER_PIPELINE_KILLS, default 3);
# VMHA_FAILOVER_PIPELINE_KILLS=50 runs the full loop.
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
for p in /bin/bash /usr/bin/seq /usr/bin/sort /usr/bin/md5sum /usr/bin/cat; do
  [ -x "$p" ] || { echo "SKIP: $p is not installed"; exit 77; }
done
vmha_repl_setup
cd "$T" || exit 1
KILLS=${VMHA_FAILOVER_PIPELINE_KILLS:-3}
FENCE="true"
LEASE_MS=300
export TMPDIR=.
fail=0

LINES=2000
/bin/bash -c "seq 1 $LINES | while read i; do echo \"line \$i\"; done | cat -n" > lines.native
kill_loop "numbered lines through a pipeline" "$KILLS" $((KILLS * 3)) $((LINES - 1)) lines.native \
  /bin/bash -c "seq 1 $LINES | while read i; do echo \"line \$i\"; done | cat -n"

PROBE="$top_builddir/tests/vmha/fork_probe"
SHARED_LINES=3000
"$PROBE" sharedlines $SHARED_LINES > shared.native
kill_loop "child lines into shared memory" "$KILLS" $((KILLS * 3)) $((SHARED_LINES - 1)) shared.native \
  "$PROBE" sharedlines $SHARED_LINES

KILL_ON=checkpoints
KILL_THREADS=1
SORT='seq 1 200000 | sort -n | md5sum'
/bin/bash -c "$SORT" > sort.native
checkpoint_range sort.native /bin/bash -c "$SORT"
kill_loop "seq | sort -n | md5sum" "$KILLS" $((KILLS * 3)) 0 sort.native /bin/bash -c "$SORT"
exit $fail
