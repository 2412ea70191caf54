#!/usr/bin/env bash
# contrib/check-layers, which `make` runs: on a small tree planted in $TMPDIR
# it fails on two folders that include each other and on a longer loop,
# naming the folders and the #include lines; it passes a tree without a
# loop (a folder's includes of itself, same-folder includes and system
# headers do not count) and a loop whose edge is in the allow file; it
# rejects a malformed allow file. The source tree passes with its own allow
# file.
. "$(dirname "$0")/lib.sh"
CHECK="$top_srcdir/contrib/check-layers"
T=$(mktemp -d "${TMPDIR:-/tmp}/duet-layers.XXXXXX")
trap 'rm -rf "$T"' EXIT

# put FILE LINE...: writes FILE under the planted tree
put() { local f="$T/tree/$1"; shift; mkdir -p "$(dirname "$f")"; printf '%s\n' "$@" > "$f"; }
# layers [ARG...]: runs the check on the planted tree; sets RC and OUT
layers() { set +e; OUT=$(sh "$CHECK" "$@" "$T/tree" 2>&1); RC=$?; set -e; }

# Layered: policy/sim -> policy/core, vmha/engine -> vmha/transport -> vmha.
put policy/core/policy.h '#pragma once' '#include <vector>' '#include "config.h"'
put policy/core/policy.cc '#include "policy/core/policy.h"' '#include "local.h"'
put policy/core/local.h '#pragma once'
put policy/sim/sim.cc '#include "policy/core/policy.h"' '#include "policy/sim/sim.h"'
put policy/sim/sim.h '#pragma once'
put vmha/status.h '#pragma once'
put vmha/transport/channel.h '#include "vmha/status.h"'
put vmha/engine/run.cc '  #  include "vmha/transport/channel.h"'
layers
[ "$RC" = 0 ] || fail "a layered tree failed (exit $RC): $OUT"
layers --edges
[ "$OUT" = "$(printf '%s\n' 'policy/sim -> policy/core' 'vmha/engine -> vmha/transport' 'vmha/transport -> vmha')" ] \
  || fail "edges of the layered tree: $OUT"

# Two folders that include each other.
put policy/core/registry.cc '#include "policy/sim/sim.h"'
layers
[ "$RC" = 1 ] || fail "policy/core <-> policy/sim passed (exit $RC): $OUT"
[[ "$OUT" == *"loop:"*policy/core*policy/sim* || "$OUT" == *"loop:"*policy/sim*policy/core* ]] \
  || fail "the loop's folders are not named: $OUT"
[[ "$OUT" == *'policy/core -> policy/sim   (policy/core/registry.cc: #include "policy/sim/sim.h")'* ]] \
  || fail "the include that closes the loop is not named: $OUT"
note "planted 2-folder loop: $(head -n1 <<< "$OUT")"

# Allowed: the same edge in the allow file passes.
printf '# known, being removed\npolicy/core -> policy/sim  # registry\n' > "$T/allow"
layers --allow "$T/allow"
[ "$RC" = 0 ] || fail "an allowed edge still failed (exit $RC): $OUT"
layers --all --allow "$T/allow"
[ "$RC" = 1 ] || fail "--all passed a tree with a loop (exit $RC): $OUT"
rm "$T/tree/policy/core/registry.cc"
layers --allow "$T/allow"
[ "$RC" = 0 ] && [[ "$OUT" == *"'policy/core -> policy/sim' no longer occurs"* ]] \
  || fail "a stale allowed edge was not noted (exit $RC): $OUT"

# A loop over three folders, across the top-level trees.
put vmha/status.cc '#include "plugins/common/conf.h"'
put plugins/common/conf.h '#include "vmha/engine/run.h"'
put vmha/engine/run.h '#pragma once'
layers
[ "$RC" = 1 ] || fail "vmha -> plugins/common -> vmha/engine -> vmha passed (exit $RC): $OUT"
for f in vmha plugins/common vmha/engine vmha/transport; do
  grep -q "loop:.* $f\( \|$\)" <<< "$OUT" || fail "folder $f missing from the loop: $OUT"
done
note "planted 4-folder loop: $(head -n1 <<< "$OUT")"

# A malformed allow file is an error, not a pass.
echo 'policy/core policy/sim' > "$T/allow"
layers --allow "$T/allow"
[ "$RC" = 2 ] || fail "a malformed allow file gave exit $RC: $OUT"

# Top-level trees in a loop with no folder loop: policy/a -> replay and
# replay -> policy/b (the duet program once lived in policy/ and did this).
rm -rf "$T/tree"
put policy/b/b.h '#pragma once'
put replay/r.h '#include "policy/b/b.h"'
put policy/a/a.cc '#include "replay/r.h"'
layers
[ "$RC" = 1 ] || fail "policy -> replay -> policy passed (exit $RC): $OUT"
[[ "$OUT" == *"top-level folders that depend on each other in a loop:"* ]] || fail "the top-level loop is not named: $OUT"
[[ "$OUT" == *'policy -> replay   (policy/a/a.cc: #include "replay/r.h")'* ]] \
  || fail "the include that closes the top-level loop is not named: $OUT"
note "planted top-level loop: $(head -n1 <<< "$OUT")"

# A library that includes the program folder fails even without a loop.
rm -rf "$T/tree"
put tools/duet/commands.h '#pragma once'
put tools/duet/main.cc '#include "tools/duet/commands.h"' '#include "policy/b/b.h"'
put policy/b/b.h '#pragma once'
layers
[ "$RC" = 0 ] || fail "a program over a library failed (exit $RC): $OUT"
put plugins/check/c.cc '#include "tools/duet/commands.h"'
layers
[ "$RC" = 1 ] && [[ "$OUT" == *'plugins includes the program folder tools/'*'plugins/check/c.cc'* ]] \
  || fail "a library including tools/ passed or was not named (exit $RC): $OUT"

# The source tree, as make checks it.
sh "$CHECK" "$top_srcdir" || fail "the source tree has a loop between folders or top-level trees"
echo "ok: check-layers fails on planted loops (naming them), passes layered and allowed trees"
