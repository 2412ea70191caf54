#!/usr/bin/env bash
# The README's demo command, contrib/demo, run as a newcomer runs it (on the
# built tree: --build). Its cluster part schedules with the learned agents of
# the shipped model: both load, the jobs queued behind busy nodes get SITE
# factors in sprio (one row each), every job completes, and `duet explain`
# prints the ordering agent's rank and the placement's reasons; the
# simulator's table has duet's row; the --ha part ends with each task's
# output equal to the native run and the failover in sacct (skipped only on
# a host without /dev/kvm: where it is here, a skipped --ha part fails).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
out=$(mktemp /tmp/duet-demo-out.XXXXXX)
trap 'rm -f "$out"' EXIT
rc=0
"$top_srcdir/contrib/demo" --build "$top_builddir" > "$out" 2>&1 || rc=$?
[ $rc = 0 ] || { cat "$out"; fail "contrib/demo exited $rc"; }
has() { grep -qE -- "$1" "$out" || { cat "$out"; fail "contrib/demo: no line matching '$1'"; }; }
count() { local n; n=$(grep -cE -- "$1" "$out" || true); [ "$n" = "$2" ] || { cat "$out"; fail "contrib/demo: $n lines matching '$1', not $2"; }; }
has '^site_factor/duet: scorer model\(cksum [0-9]+, format [0-9]+\)'
has '^select/duet: ranker model\(cksum [0-9]+, format [0-9]+\)'
has '^ +JOBID +PRIORITY +SITE +AGE '
count '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+$' 5
count '^[0-9]+ +(typed-v100|big-any|small-any|typed-k80|any-gpu) .* COMPLETED$' 5
has '^duet: rank [1-5]/[1-5] score [-0-9.e]+ by model\(cksum [0-9]+, format [0-9]+\).*; nodes node[1-4]: .*ranking node'
has '^\| duet \| duet \| [0-9.]+ \|'
if grep -q 'vmha --ha demo skipped' "$out"; then
  [ ! -e /dev/kvm ] || fail "the --ha part was skipped on a host with /dev/kvm: $(grep 'vmha --ha demo skipped' "$out")"
  note "the --ha part was skipped: no /dev/kvm here"
else
  count '^   task [01]: [0-9]+ lines, identical to the native run' 2
  has 'COMPLETED +0:0 +vmha: tasks=2 .*failovers=1'
fi
echo "ok: contrib/demo ran the learned agents in Slurm (sprio SITE, sacct, duet explain), the simulator and the --ha part"
