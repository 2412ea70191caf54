#!/usr/bin/env bash
# configure names the Debian package of a missing dependency.
. "$(dirname "$0")/lib.sh"
[ -x "$top_srcdir/configure" ] || skip "no generated configure script (run autoreconf -fi)"
d=$(mktemp -d /tmp/duet-conf.XXXXXX); trap 'rm -rf "$d"' EXIT
mkdir "$d/pc"
# an empty pkg-config search path hides Eigen, UCX, Check... : the first one checked must be named
set +e
out=$(cd "$d" && PKG_CONFIG_LIBDIR="$d/pc" PKG_CONFIG_PATH= "$top_srcdir/configure" 2>&1)
rc=$?
set -e
[ $rc -ne 0 ] || fail "configure succeeded without pkg-config modules"
msg=$(echo "$out" | grep 'error:' | tail -n1)
note "$msg"
[[ "$msg" == *"apt-get install libeigen3-dev"* ]] || fail "configure error does not name the package: $msg"

# a Slurm source tree that is not one is refused with a clear reason
mkdir "$d/notslurm"
set +e
out=$(cd "$d" && "$top_srcdir/configure" --with-slurm-source="$d/notslurm" 2>&1)
rc=$?
set -e
[ $rc -ne 0 ] || fail "configure accepted a bogus --with-slurm-source"
[[ "$out" == *"not a configured Slurm source tree"* ]] || fail "unclear error for a bogus Slurm source: $(echo "$out" | tail -n1)"
echo "PASS: configure names missing packages and rejects a bogus Slurm source"
