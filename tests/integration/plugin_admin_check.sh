#!/usr/bin/env bash
# Before the switch, on a cluster still on Slurm's defaults (multifactor,
# cons_tres) with duet.conf and the shipped model set up as README says:
#  - `duet check-config` fails (slurm.conf does not name duet's plugins yet)
#    and `duet check-config --pending` passes, naming the lines enable writes;
#  - `duet-admin enable` refuses a corrupt model and a bad duet.conf line:
#    exit 1, the problem printed, slurm.conf untouched, nothing installed,
#    slurmctld still on cons_tres; `--force` switches anyway;
#  - `duet-admin install` installs vmha.so too, and the plugstack.conf that
#    `testcluster --plugstack` wrote makes sbatch offer --ha.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
[ -f "$SITE_LIBS/site_factor_duet.so" ] || skip "site_factor/duet not built in $top_builddir"
[ -f "$top_builddir/plugins/spank/vmha/.libs/vmha.so" ] || skip "vmha.so not built in $top_builddir"
duet="$top_builddir/duet"
[ -x "$duet" ] || skip "duet not built in $top_builddir"
admin="$top_srcdir/contrib/duet-admin"

plugdir=$(mktemp -d /tmp/duet-plugindir.XXXXXX)
# (optional: the file is there only once duet-admin installed it)
cluster_up --no-accounting --nodes 1 --mix v100:4 --plugin-dir "$plugdir" --plugstack "optional $plugdir/vmha.so"
trap 'cluster_down; rm -rf "$plugdir"' EXIT
conf=$SLURM_CONF
etc=$CLUSTER_DIR/etc
cp "$top_srcdir/etc/duet.conf.example" "$etc/duet.conf"
cp "$top_srcdir/models/duet.model" "$etc/duet.model"
chmod 644 "$etc/duet.conf" "$etc/duet.model"
cp "$conf" "$CLUSTER_DIR/slurm.conf.before"
loaded() { timeout 10 scontrol show config | sed -n "s/^$1 *= *//p"; }
admin() { "$admin" "$@" --slurm-conf "$conf" --build "$top_builddir" --wait 60; }

# ---- check-config before the switch -----------------------------------------
rc=0; out=$("$duet" check-config 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "check-config (the live switch) exited $rc before the switch: $out"
grep -qF 'expected SelectType=select/duet, got select/cons_tres' <<<"$out" || fail "check-config: $out"
out=$("$duet" check-config --pending 2>&1) || fail "check-config --pending on a good setup: $out"
note "$out"
case "$out" in
  "ok: $etc/duet.conf: ordering agent $etc/duet.model model(cksum "*"; $conf (as duet-admin enable --mode site-factor will write it): priority/multifactor + site_factor/duet, select/duet; "*) ;;
  *) fail "unexpected summary: $out" ;;
esac
out=$("$duet" check-config --pending --mode priority 2>&1) || fail "check-config --pending --mode priority: $out"
grep -qF "will write it): priority/duet, select/duet" <<<"$out" || fail "--mode priority: $out"

# ---- enable refuses a bad setup ----------------------------------------------
# refused: exit 1 naming WHAT, nothing changed
refused() {  # refused WHAT
  local rc=0 out
  out=$(admin enable 2>&1) || rc=$?
  [ "$rc" = 1 ] || fail "duet-admin enable exited $rc with $1: $out"
  grep -qF "$1" <<<"$out" || fail "duet-admin enable did not name '$1': $out"
  grep -qF 'nothing switched' <<<"$out" || fail "duet-admin enable: $out"
  cmp -s "$conf" "$CLUSTER_DIR/slurm.conf.before" || fail "slurm.conf changed by a refused enable"
  [ -z "$(ls "$plugdir")" ] || fail "a refused enable installed: $(ls "$plugdir")"
  [ "$(loaded SelectType)" = select/cons_tres ] || fail "slurmctld runs $(loaded SelectType) after a refused enable"
}
cp "$etc/duet.model" "$CLUSTER_DIR/duet.model.good"
head -c 200 "$CLUSTER_DIR/duet.model.good" > "$etc/duet.model"   # cut short
refused "$etc/duet.conf:$(grep -n '^ModelPath=' "$etc/duet.conf" | cut -d: -f1): ModelPath"
cp "$CLUSTER_DIR/duet.model.good" "$etc/duet.model"
sed -i 's/^Ranker=model$/Ranker=fastest/' "$etc/duet.conf"
refused "$etc/duet.conf:$(grep -n '^Ranker=' "$etc/duet.conf" | cut -d: -f1): Ranker: expected one of"

# ---- --force -------------------------------------------------------------------
out=$(admin enable --force 2>&1) || fail "duet-admin enable --force: $out"
grep -qF 'switching anyway (--force)' <<<"$out" || fail "enable --force did not say it overrode the check: $out"
[ "$(loaded SelectType)" = select/duet ] || fail "slurmctld runs $(loaded SelectType) after enable --force"
sed -i 's/^Ranker=fastest$/Ranker=model/' "$etc/duet.conf"
out=$("$duet" check-config 2>&1) || fail "check-config after the switch: $out"

# ---- install: vmha.so too, and testcluster's plugstack.conf loads it ----------
[ -f "$plugdir/vmha.so" ] || fail "duet-admin install left out vmha.so: $(ls "$plugdir")"
grep -qF -- "--ha" <(timeout 10 sbatch --help 2>&1) || fail "sbatch offers no --ha with $CLUSTER_DIR/etc/plugstack.conf"
echo "PASS: check-config --pending passes before the switch; enable refuses a corrupt model and a bad duet.conf line, --force overrides; vmha.so installed and loaded through --plugstack"
