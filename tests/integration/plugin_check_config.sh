#!/usr/bin/env bash
# duet check-config on the test cluster's real configuration, set up as
# duet-check-config(1) says (the example duet.conf, the shipped model next to
# it): passes; after breaking one key it fails (exit 1) naming the file and
# line, and slurmctld logs that problem once per plugin on reconfigure and
# at start.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
duet="$top_builddir/duet"
[ -x "$duet" ] || skip "duet not built in $top_builddir"

site_factor_cluster_up --nodes 2 --mix v100:4 --set PrioritySiteFactorParameters=weight=10000
cp "$top_srcdir/etc/duet.conf.example" "$DUET_CONF"
cp "$top_srcdir/models/duet.model" "$CLUSTER_DIR/etc/duet.model"
chmod 644 "$DUET_CONF" "$CLUSTER_DIR/etc/duet.model"
before=$(wc -l < "$CTLD_LOG")
timeout 20 scontrol reconfigure || fail "scontrol reconfigure failed"
wait_log_after "$before" 'site_factor/duet: scorer model\(cksum ' 15
wait_log_after "$before" 'select/duet: ranker model\(cksum [0-9]+.*, observer rwgp' 15

# SLURM_CONF (cluster_up) names the cluster's slurm.conf; duet.conf is next to it
out=$("$duet" check-config 2>&1) || fail "check-config on the cluster's setup: $out"
note "$out"
case "$out" in
  "ok: $DUET_CONF: ordering agent $CLUSTER_DIR/etc/duet.model model(cksum "*"; $SLURM_CONF: priority/multifactor + site_factor/duet, select/duet; "*) ;;
  *) fail "unexpected summary: $out" ;;
esac

# one key broken: exit 1, its file and line, nothing else
sed -i 's/^Ranker=model$/Ranker=fastest/' "$DUET_CONF"
line=$(grep -n '^Ranker=' "$DUET_CONF" | cut -d: -f1)
rc=0
out=$("$duet" check-config 2>/dev/null) || rc=$?
[ "$rc" = 1 ] || fail "check-config exited $rc on a broken Ranker: $out"
want="$DUET_CONF:$line: Ranker: expected one of model | prefer-fast | none, got 'fastest' (default kept)"
[ "$out" = "$want" ] || fail "expected '$want', got '$out'"

# slurmctld: that line once per plugin that reads duet.conf, not more
before=$(wc -l < "$CTLD_LOG")
timeout 20 scontrol reconfigure || fail "scontrol reconfigure failed"
wait_log_after "$before" 'select/duet: ranker ' 15
wait_log_after "$before" 'site_factor/duet: scorer ' 15
for plugin in site_factor/duet select/duet; do
  n=$(tail -n +"$((before + 1))" "$CTLD_LOG" | grep -cF "$plugin: $DUET_CONF:$line:") || true
  [ "$n" = 1 ] || fail "$plugin logged the bad Ranker line $n times after one reconfigure"
done

# and at start, where slurmctld loads select/duet and then reconfigures it at once
restart_ctld
wait_log_after "$CTLD_MARK" 'site_factor/duet: scorer ' 30
for plugin in site_factor/duet select/duet; do
  n=$(tail -n +"$((CTLD_MARK + 1))" "$CTLD_LOG" | grep -cF "$plugin: $DUET_CONF:$line:") || true
  [ "$n" = 1 ] || fail "$plugin logged the bad Ranker line $n times at start"
done
echo "PASS: check-config passes on the documented setup, names the broken line; slurmctld logs it once per plugin"
