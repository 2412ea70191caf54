#!/usr/bin/env bash
# site_factor/duet with accounting, as a site runs it: priority/multifactor's
# QOS factor still counts next to the learned SITE factor. Two pending GPU
# jobs: the agent (small-first) puts the 1-GPU job first (SITE = weight), the
# 2-GPU job last (SITE 0); a QOS worth twice the weight takes the 2-GPU job
# to the top, while sprio keeps showing both factors.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
[ -f "$SITE_LIBS/site_factor_duet.so" ] || skip "site_factor/duet not built in $top_builddir"

W=5000
plugin_dir="$SLURM_PLUGINDIR:$SITE_LIBS:$SELECT_LIBS"
cluster_up --nodes 2 --mix v100:4 --set "PluginDir=$plugin_dir" \
  --set PriorityType=priority/multifactor --set PrioritySiteFactorPlugin=site_factor/duet \
  --set PrioritySiteFactorParameters=weight=$W --set PriorityWeightQOS=$((2 * W)) --set SelectType=select/duet
CTLD_LOG="$CLUSTER_DIR/log/slurmctld.log"
DUET_CONF="$CLUSTER_DIR/etc/duet.conf"
ORDER_PLUGIN=site_factor/duet
timeout 20 sacctmgr -i add qos high priority=100 >/dev/null || fail "sacctmgr add qos"
for i in $(seq 50); do timeout 5 sacctmgr -n -P show qos high format=Name | grep -qx high && break; sleep 0.2; done
write_duet_conf Scorer=small-first Ranker=none RescoreInterval=1

blocker=$(block_gpus 2 4)
one=$(sbatch --parsable -o /dev/null --gres=gpu:1 --wrap 'sleep 1') || fail "sbatch"
two=$(sbatch --parsable -o /dev/null --gres=gpu:2 --qos=high --wrap 'sleep 1') || fail "sbatch --qos=high"
[ "$(field "$two" QOS)" = high ] || fail "job $two QOS: $(field "$two" QOS)"

# "JOBID PRIORITY SITE QOS" (weighted) for both jobs
rows() { { timeout 10 sprio -h -o '%i %Y %S %Q' 2>/dev/null || true; } | awk -v a="$one" -v b="$two" '$1 == a || $1 == b' | sort -n | paste -sd';'; }
want="$one $W $W 0;$two $((2 * W)) 0 $((2 * W))"
for i in $(seq 75); do [ "$(rows)" = "$want" ] && break; sleep 0.2; done
[ "$(rows)" = "$want" ] || fail "sprio rows: expected '$want', got '$(rows)'"
timeout 10 sprio | head -n1 | grep -w SITE | grep -qw QOS || fail "sprio header: $(timeout 10 sprio | head -n1)"
wait_order 10 "$two $one" "$one" "$two"
note "sprio: $(rows)"

timeout 10 scancel "$blocker"
wait_state 60 COMPLETED "$one" "$two"
ctld_alive || fail "slurmctld died"
echo "PASS: with accounting, the QOS factor ($((2 * W))) outweighs the learned SITE factor ($W) as weighted; sprio shows both"
