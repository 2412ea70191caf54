#!/bin/sh
# Fault injection (contrib/vmha-faults) in a short series: the primary and
# the backup in two network namespaces, each fault once on Debian's python3
# printing numbered lines: kill -9 and SIGSTOP of either side at a random
# checkpoint, a lossy and reordering link, a 100 Mbit/s link, a partition.
# Every run: each line at most once and in order, the native output and
# files when the program finished, and a primary that stopped reported so
# (vmha(1) Split brain). `contrib/vmha-faults --runs N` runs long series.
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
[ "$(id -u)" -eq 0 ] || { echo "SKIP: network namespaces and tc need root"; exit 77; }
command -v ip >/dev/null && command -v tc >/dev/null || { echo "SKIP: no ip or tc (Debian: iproute2)"; exit 77; }
[ -x /usr/bin/python3 ] || { echo "FAIL: /usr/bin/python3 is not installed (contrib/setup.sh installs it)"; exit 1; }
if ! ip netns add "vf-probe-$$" 2>/dev/null; then echo "SKIP: cannot create network namespaces here"; exit 77; fi
ip netns del "vf-probe-$$"
exec "$top_srcdir/contrib/vmha-faults" --build "$top_builddir" --each --programs numbered
