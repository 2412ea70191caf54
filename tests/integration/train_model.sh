#!/usr/bin/env bash
# contrib/train-model, the shipped model's recipe, on a tiny budget: each
# stage starts from the one before (the model's provenance says --init), the
# first makes it preemptive with the Gittins prior and the tight spread rule,
# the validation compares every seed on the same scenarios, the best seed's
# model is DIR/duet.model, --anchor reaches every stage, and a bad argument
# is refused by name.
. "$(dirname "$0")/lib.sh"
require_duet
T=$(mktemp -d "${TMPDIR:-/tmp}/duet-train-model.XXXXXX")
trap 'rm -rf "$T"' EXIT
tm="$top_srcdir/contrib/train-model"

"$tm" --out "$T/m" --seeds 1,2 --stages 3 --episodes 1 --window 20 --jobs 30 --validate 2 --anchor 0.5 --duet "$DUET" \
  > "$T/out" 2> "$T/err" || fail "train-model failed: $(cat "$T/err"; tail -5 "$T/m/log")"
[ "$(grep -c '^train-model: seed [12] stage [123]/3: ' "$T/out")" = 6 ] || fail "expected 3 stages per seed: $(cat "$T/out")"
# one validation scenario per family, the same for both seeds
v1=$(sed -n 's/^train-model: validate seed 1, \([^ ]*\) (scenario seed \([0-9]*\)).*/\1 \2/p' "$T/out")
v2=$(sed -n 's/^train-model: validate seed 2, \([^ ]*\) (scenario seed \([0-9]*\)).*/\1 \2/p' "$T/out")
[ "$v1" = "$(printf 'mixed/lognormal 900001\ngavel/heavy-tail 900002')" ] && [ "$v1" = "$v2" ] \
  || fail "validation scenarios: seed 1 '$v1', seed 2 '$v2'"
chosen=$(sed -n 's/^train-model: seed \([12]\) chosen .*/\1/p' "$T/out")
[ -n "$chosen" ] && cmp -s "$T/m/duet.model" "$T/m/seed$chosen.model" || fail "duet.model is not the chosen seed's: $(tail -3 "$T/out")"
gm() { sed -n "s/^train-model: seed $1: geometric mean \\([0-9.]*\\) x.*/\\1/p" "$T/out"; }
other=$((3 - chosen))
awk -v a="$(gm "$chosen")" -v b="$(gm "$other")" 'BEGIN { exit !(a <= b) }' \
  || fail "seed $chosen chosen at $(gm "$chosen") over seed $other at $(gm "$other")"
info=$("$DUET" model info "$T/m/duet.model") || fail "model info: $info"
grep -qx 'spread sets  tight' <<<"$info" || fail "not the tight rule: $info"
grep -qx 'preemptive   yes (prior gittins)' <<<"$info" || fail "not preemptive with the Gittins prior: $info"
grep -q -- "--init $T/m/seed$chosen/stage2.model" <<<"$info" || fail "stage 3 did not start from stage 2: $info"
grep -q -- "--anchor 0.5" <<<"$info" || fail "--anchor did not reach duet train: $info"
cmp -s "$T/m/seed1.model" "$T/m/seed2.model" && fail "two seeds trained the same model"

out=$("$tm" --out "$T/x" --stages 0 --duet "$DUET" 2>&1) && fail "--stages 0 accepted"
grep -q "'0' is not a positive integer" <<<"$out" || fail "--stages 0: $out"
out=$("$tm" --seeds 1 2>&1) && fail "no --out accepted"
grep -q -- "--out DIR is required" <<<"$out" || fail "no --out: $out"
note "$(grep chosen "$T/out")"
