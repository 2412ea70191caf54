#!/usr/bin/env bash
# contrib/doc-check: every duet, vmha and contrib/ command the README and
# the man pages show names subcommands and options the programs have, and
# whole commands (code blocks, EXAMPLES) give every required option. First
# it must catch a planted page with a misspelt option, an unknown
# subcommand and a missing required option; then the real docs must pass.
. "$(dirname "$0")/lib.sh"
: "${top_builddir:=$top_srcdir/build}"
CHECK="$top_srcdir/contrib/doc-check"
command -v python3 >/dev/null || skip "python3 not installed (contrib/setup.sh installs it)"
[ -x "$top_builddir/duet" ] || skip "duet not built in $top_builddir"
T=$(mktemp -d "${TMPDIR:-/tmp}/duet-doccheck.XXXXXX")
trap 'rm -rf "$T"' EXIT

printf '%s\n' '.TH X 1' '.SH EXAMPLES' '.nf' \
  'duet sim \-\-trace t.csv \-\-cluster c.csv \-\-orderr qssf' \
  'duet frobnicate' \
  'duet convert philly data/philly/philly.csv > philly.csv' \
  '.fi' > "$T/bad.1"
set +e; out=$("$CHECK" --build "$top_builddir" "$T/bad.1" 2>&1); rc=$?; set -e
[ $rc = 1 ] || fail "a page with three wrong commands passed (exit $rc): $out"
for want in "unknown option --orderr" "no subcommand 'frobnicate'" "missing required option --output"; do
  grep -qF -- "$want" <<< "$out" || fail "doc-check did not report '$want': $out"
done
note "planted page: $(tail -n1 <<< "$out")"

# Markdown: a code block's command continued over lines is checked whole
printf '%s\n' '```sh' 'duet sim --trace t.csv --cluster c.csv \' '  --placee best-fit' '```' > "$T/bad.md"
set +e; out=$("$CHECK" --build "$top_builddir" "$T/bad.md" 2>&1); rc=$?; set -e
[ $rc = 1 ] && grep -qF -- "bad.md:2: duet sim" <<< "$out" && grep -qF -- "unknown option --placee" <<< "$out" \
  || fail "a continued line's misspelt option passed (exit $rc): $out"

out=$("$CHECK" --build "$top_builddir" 2>&1) || fail "the docs show commands the programs refuse:
$out"
note "$(tail -n1 <<< "$out")"
echo "ok: README and man page commands match the programs"
