#!/usr/bin/env bash
# The set-up script run again changes nothing: no package installed, no apt
# state touched; the Slurm source cache is reused, not rebuilt.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "contrib/setup.sh needs root"
command -v dpkg-query >/dev/null || skip "not a Debian system"

before=$(md5sum /var/lib/dpkg/status | cut -d' ' -f1)
out=$("$top_srcdir/contrib/setup.sh" 2>&1) || fail "setup.sh failed: $out"
after=$(md5sum /var/lib/dpkg/status | cut -d' ' -f1)
note "setup.sh: $out"
[ "$before" = "$after" ] || fail "setup.sh changed the dpkg database on a second run"
[[ "$out" == *"packages present"* ]] || fail "setup.sh did not report all packages present: $out"

tree=$("$top_srcdir/contrib/slurm-source.sh" 2>/dev/null) || fail "slurm-source.sh failed"
[ -f "$tree/config.h" ] || fail "slurm-source.sh printed $tree without config.h"
stamp=$(stat -c %Y "$tree/config.h")
tree2=$("$top_srcdir/contrib/slurm-source.sh" 2>/dev/null)
[ "$tree" = "$tree2" ] && [ "$(stat -c %Y "$tree/config.h")" = "$stamp" ] \
  || fail "slurm-source.sh rebuilt its cache on a second run"
installed=$(dpkg-query -W -f='${Version}' slurmctld); installed=${installed%%-*}
grep -q "#define SLURM_VERSION_STRING \"$installed\"" "$tree/config.h" \
  || fail "cached Slurm source is not the installed version $installed"
echo "PASS: setup.sh and slurm-source.sh are idempotent"
