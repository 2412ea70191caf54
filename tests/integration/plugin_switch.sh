#!/usr/bin/env bash
# contrib/duet-admin switches a cluster with accounting from Slurm's defaults
# (priority/multifactor, select/cons_tres) to duet (site_factor/duet,
# select/duet) and back while GPU jobs run and others pend:
#  - after each switch slurmctld runs the configured plugins and
#    `duet-admin status` says so, and names the running jobs that started
#    under select/duet;
#  - every job, started before or after a switch (one starts an srun step
#    after it), completes: squeue empties and sacct says COMPLETED with
#    gres/gpu=2 in its AllocTRES, none stays in CG; no slurmd rejects an RPC
#    for an unknown select plugin;
#  - slurm.conf gets back its old lines, select_duet.so stays installed and
#    `duet-admin uninstall` refuses while jobs of the select/duet period remain.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
[ -f "$SITE_LIBS/site_factor_duet.so" ] || skip "site_factor/duet not built in $top_builddir"
admin="$top_srcdir/contrib/duet-admin"

# plugins go where duet-admin installs them: the first PluginDir entry
plugdir=$(mktemp -d /tmp/duet-plugindir.XXXXXX)
cluster_up --nodes 2 --mix v100:4 --plugin-dir "$plugdir"
trap 'cluster_down; rm -rf "$plugdir"' EXIT
conf=$SLURM_CONF
cp "$conf" "$CLUSTER_DIR/slurm.conf.before"
CTLD_LOG="$CLUSTER_DIR/log/slurmctld.log"

admin() { "$admin" "$@" --slurm-conf "$conf" --build "$top_builddir" --wait 60; }
# (slurmctld shows PrioritySiteFactorPlugin as (null): duet-admin status checks it)
loaded() { timeout 10 scontrol show config | sed -n "s/^$1 *= *//p"; }
expect_loaded() {  # expect_loaded KEY VALUE
  [ "$(loaded "$1")" = "$2" ] || fail "slurmctld runs $1=$(loaded "$1"), expected $2"
}

# gated_jobs GATE N: N jobs of 2 GPUs each that run until GATE exists (the
# cluster has 8 GPUs: 4 run, the rest pend); the first runs an srun step once
# released, i.e. after the switch. Prints the ids.
gated_jobs() {
  local gate=$1 n=$2; local wait="while [ ! -e $gate ]; do sleep 0.2; done"
  sbatch --parsable -o /dev/null --gres=gpu:2 --wrap "$wait; srun -n1 true" || fail sbatch
  for _ in $(seq 2 "$n"); do sbatch --parsable -o /dev/null --gres=gpu:2 --wrap "$wait" || fail sbatch; done
}
# running_and_pending JOBID...: until 4 of them run and the others pend
running_and_pending() {
  for _ in $(seq 150); do
    [ "$(timeout 10 squeue -h -t R -j "$(IFS=,; echo "$*")" | wc -l)" = 4 ] && return 0
    sleep 0.2
  done
  timeout 10 squeue || true
  timeout 10 scontrol show nodes | grep -E 'NodeName|State=|GresUsed|AllocTRES' || true
  fail "4 of $* not running after 30 s"
}
# all_complete JOBID...: squeue empties (none stuck in CG), sacct says COMPLETED
all_complete() {
  for _ in $(seq 300); do
    [ -z "$(timeout 10 squeue -h -o %i)" ] && break
    sleep 0.2
  done
  if [ -n "$(timeout 10 squeue -h -o %i)" ]; then
    # seen before select/duet waited for nodes to register after its start
    # (gres_known.h): a job started just after the switch ran without its
    # GPUs, and a later srun step of a job on that node waited for them
    timeout 10 squeue || true
    timeout 10 sacct -X -P -o JobID,Start,End,NodeList,AllocTRES,State || true
    fail "jobs left in squeue after 60 s"
  fi
  wait_jobs_done 60 "$@"
  local j st tres
  for j in "$@"; do
    st=$(timeout 10 sacct -X -n -P -j "$j" --format=State | head -n1)
    [ "$st" = COMPLETED ] || fail "job $j: $st in sacct, expected COMPLETED"
    # a job started just after the switch gets its GPUs too
    tres=$(timeout 10 sacct -X -n -P -j "$j" --format=AllocTRES | head -n1)
    [[ "$tres" == *gres/gpu=2* ]] || fail "job $j ran without its 2 GPUs: AllocTRES=$tres"
  done
}
no_rejected_rpcs() {
  ! grep -hE 'select plugin .* not found|Malformed RPC|Incomplete job' "$CLUSTER_DIR"/log/slurm*.log \
    || fail "an RPC or saved job was rejected for its select plugin (above)"
}

expect_loaded SelectType select/cons_tres
expect_loaded PriorityType priority/multifactor

# ---- defaults -> duet, with jobs running under select/cons_tres ----------
mapfile -t js1 < <(gated_jobs "$CLUSTER_DIR/go1" 6)
[ ${#js1[@]} = 6 ] || fail "submitted ${#js1[@]} of 6 jobs"
running_and_pending "${js1[@]}"
admin enable --mode site-factor > "$CLUSTER_DIR/enable.out" 2>&1 \
  || { cat "$CLUSTER_DIR/enable.out"; fail "duet-admin enable"; }
expect_loaded SelectType select/duet
expect_loaded PriorityType priority/multifactor
grep -q 'select/duet: ' "$CTLD_LOG" || fail "select/duet not in slurmctld's log"
for f in select_duet site_factor_duet priority_duet libduet_channel; do
  [ -f "$plugdir/$f.so" ] || fail "$f.so not installed into $plugdir"
done
status=$(admin status) || fail "duet-admin status"
note "after enable:"; sed 's/^/#   /' <<<"$status"
grep -qE '^  SelectType +configured select/duet +loaded select/duet$' <<<"$status" || fail "status: SelectType"
grep -qE '^  PrioritySiteFactorPlugin +configured site_factor/duet +loaded site_factor/duet$' <<<"$status" \
  || fail "status: PrioritySiteFactorPlugin"
grep -q "select_duet.so in $plugdir" <<<"$status" || fail "status: select_duet.so not installed"
touch "$CLUSTER_DIR/go1"
all_complete "${js1[@]}"
no_rejected_rpcs
note "defaults -> duet: ${#js1[@]} jobs completed"

# ---- duet -> defaults, with jobs running under select/duet ---------------
mapfile -t js2 < <(gated_jobs "$CLUSTER_DIR/go2" 6)
[ ${#js2[@]} = 6 ] || fail "submitted ${#js2[@]} of 6 jobs"
running_and_pending "${js2[@]}"
running=$(timeout 10 squeue -h -t R -o %i | sort -n | paste -sd' ')
status=$(admin status)
grep -qx "running jobs started under select/duet: $running" <<<"$status" \
  || fail "status does not name the running jobs ($running): $status"
admin disable > "$CLUSTER_DIR/disable.out" 2>&1 \
  || { cat "$CLUSTER_DIR/disable.out"; fail "duet-admin disable"; }
expect_loaded SelectType select/cons_tres
expect_loaded PriorityType priority/multifactor
diff <(grep -v '^#' "$CLUSTER_DIR/slurm.conf.before") <(grep -v '^#' "$conf") \
  || fail "slurm.conf after disable differs from before enable"
ls "$conf".duet-admin-* >/dev/null 2>&1 || fail "no dated backup of slurm.conf"
status=$(admin status)
note "after disable:"; sed 's/^/#   /' <<<"$status"
grep -qE '^  SelectType +configured select/cons_tres +loaded select/cons_tres$' <<<"$status" || fail "status: SelectType"
grep -qE '^  PrioritySiteFactorPlugin +configured \(default\) +loaded site_factor/none$' <<<"$status" \
  || fail "status: PrioritySiteFactorPlugin"
grep -qx "running jobs started under select/duet: $running" <<<"$status" \
  || fail "status after disable does not name the jobs still running from select/duet ($running)"
[ -f "$plugdir/select_duet.so" ] || fail "disable removed select_duet.so while its jobs run"
if admin uninstall > "$CLUSTER_DIR/uninstall.out" 2>&1; then fail "uninstall did not refuse"; fi
grep -q 'still known to slurmctld' "$CLUSTER_DIR/uninstall.out" || fail "uninstall: $(cat "$CLUSTER_DIR/uninstall.out")"
touch "$CLUSTER_DIR/go2"
all_complete "${js2[@]}"
no_rejected_rpcs
echo "PASS: defaults -> duet -> defaults with jobs running and pending: all $(( ${#js1[@]} + ${#js2[@]} )) completed, plugins switched"
