# Helpers for the plugins' integration tests (sourced after lib.sh):
# priority/duet or site_factor/duet (under priority/multifactor) with
# select/duet. The plugins are loaded straight from the build tree through
# PluginDir; duet.conf is written next to slurm.conf after `up`, then
# `scontrol reconfigure` makes both plugins read it.
: "${top_builddir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
PRIO_LIBS="$top_builddir/plugins/priority/duet/.libs"
SELECT_LIBS="$top_builddir/plugins/select/duet/.libs"
SITE_LIBS="$top_builddir/plugins/site_factor/duet/.libs"
ORDER_PLUGIN=priority/duet  # the plugin hosting the ordering agent
SLURM_PLUGINDIR=$(pkg-config --variable=libdir slurm 2>/dev/null || echo /usr/lib/x86_64-linux-gnu)/slurm-wlm
[ -d "$SLURM_PLUGINDIR" ] || SLURM_PLUGINDIR=/usr/lib/$(gcc -print-multiarch)/slurm-wlm

# install_example_duet_conf: the cluster's etc/ gets duet.conf and the
# shipped model as README's setup puts them (duet-admin enable checks them)
install_example_duet_conf() {
  cp "$top_srcdir/etc/duet.conf.example" "$CLUSTER_DIR/etc/duet.conf"
  cp "$top_srcdir/models/duet.model" "$CLUSTER_DIR/etc/duet.model"
  chmod 644 "$CLUSTER_DIR/etc/duet.conf" "$CLUSTER_DIR/etc/duet.model"
}

require_duet_plugins() {
  require_cluster_tools
  [ -f "$PRIO_LIBS/priority_duet.so" ] && [ -f "$SELECT_LIBS/select_duet.so" ] \
    || skip "plugins not built in $top_builddir (configure found no Slurm source?)"
}

# duet_cluster_up ARGS...: a cluster running priority/duet and select/duet
duet_cluster_up() {
  cluster_up --no-accounting \
    --set "PluginDir=$SLURM_PLUGINDIR:$PRIO_LIBS:$SELECT_LIBS" \
    --set PriorityType=priority/duet --set SelectType=select/duet "$@"
  CTLD_LOG="$CLUSTER_DIR/log/slurmctld.log"
  DUET_CONF="$CLUSTER_DIR/etc/duet.conf"
}

# site_factor_cluster_up ARGS...: a cluster running priority/multifactor with
# site_factor/duet (PrioritySiteFactorParameters from the caller) and select/duet
site_factor_cluster_up() {
  [ -f "$SITE_LIBS/site_factor_duet.so" ] || skip "site_factor/duet not built in $top_builddir"
  cluster_up --no-accounting \
    --set "PluginDir=$SLURM_PLUGINDIR:$SITE_LIBS:$SELECT_LIBS" \
    --set PriorityType=priority/multifactor --set PrioritySiteFactorPlugin=site_factor/duet \
    --set SelectType=select/duet "$@"
  CTLD_LOG="$CLUSTER_DIR/log/slurmctld.log"
  DUET_CONF="$CLUSTER_DIR/etc/duet.conf"
  ORDER_PLUGIN=site_factor/duet
}

# write_duet_conf LINE...: replaces duet.conf and reconfigures the cluster
write_duet_conf() {
  printf '%s\n' "$@" > "$DUET_CONF"
  local before; before=$(wc -l < "$CTLD_LOG")
  timeout 20 scontrol reconfigure || fail "scontrol reconfigure failed"
  # both plugins report their configuration after reading it
  wait_log_after "$before" 'select/duet: ranker ' 15
  wait_log_after "$before" "$ORDER_PLUGIN: scorer " 15
}

# wait_log_after LINENO PATTERN SECS: PATTERN (grep -E) in slurmctld.log after line LINENO
wait_log_after() {
  local i
  for i in $(seq $(( $3 * 10 ))); do
    tail -n +"$(( $1 + 1 ))" "$CTLD_LOG" | grep -qE -- "$2" && return 0
    sleep 0.1
  done
  fail "'$2' not logged within $3 s (log: $CTLD_LOG)"
}

# restart_ctld: restarts slurmctld (SIGTERM, SIGKILL after 5 s); CTLD_MARK
# is slurmctld.log's length before it, for wait_log_after.
restart_ctld() {
  CTLD_MARK=$(wc -l < "$CTLD_LOG")
  "$TESTCLUSTER" restart-ctld --dir "$CLUSTER_DIR" 2>/dev/null || fail "slurmctld did not restart"
}

# observer_restored NAME: after restart_ctld, waits for select/duet's
# observer NAME to say what it restored from StateSaveLocation, and prints that.
observer_restored() {
  local line="select/duet: observer $1 restored from"
  wait_log_after "$CTLD_MARK" "$line" 10
  tail -n +"$((CTLD_MARK + 1))" "$CTLD_LOG" | grep -F "$line" | tail -n1 | sed 's/.*duet_select_state: //'
}

ctld_alive() {
  local pid; read -r pid _ < "$CLUSTER_DIR/pids/slurmctld.pid" || return 1
  [ -r "/proc/$pid/stat" ] && [ "$(sed 's/^.*) //' "/proc/$pid/stat" | cut -d' ' -f1)" != Z ]
}

# prio JOBID: the job's priority (also after it ended)
prio() { field "$1" Priority; }

# field JOBID KEY: a field of `scontrol show job` (e.g. JobState, NodeList)
field() { timeout 10 scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1; }

# explanation JOBID: the job's SystemComment (a line of its own, with spaces)
explanation() { timeout 10 scontrol show job "$1" | sed -n 's/^ *SystemComment=\(.*\) *$/\1/p' | sed 's/ *$//'; }

# wait_field SECS FIELD VALUE JOBID...: until every job's FIELD (scontrol) is VALUE
wait_field() {
  local secs=$1 name=$2 want=$3 i j ok; shift 3
  for i in $(seq $(( secs * 5 ))); do
    ok=1
    for j in "$@"; do [ "$(field "$j" "$name")" = "$want" ] || ok=0; done
    [ $ok = 1 ] && return 0
    sleep 0.2
  done
  timeout 10 squeue || true
  fail "jobs $* not $name=$want after ${secs}s"
}

# wait_resources SECS JOBID WHAT: until the scheduler has tried the job and
# left it pending for want of nodes (Reason=Resources), WHAT saying why it
# should have been
wait_resources() {
  wait_field "$1" Reason Resources "$2"
  [ "$(field "$2" JobState)" = PENDING ] || fail "job $2 is $(field "$2" JobState) on $(field "$2" NodeList), expected pending: $3"
}

# wait_state SECS STATE JOBID...: until every job is in STATE
wait_state() { local secs=$1; shift; wait_field "$secs" JobState "$@"; }

# wait_idle SECS NODE...: until every NODE is idle (a cancelled job's GPUs are
# free only once its node has left COMPLETING)
wait_idle() {
  local secs=$1 i; shift
  local nodes; nodes=$(IFS=,; echo "$*")
  for i in $(seq $(( secs * 5 ))); do
    [ "$(timeout 5 sinfo -h -N -n "$nodes" -o %T | sort -u | paste -sd,)" = idle ] && return 0
    sleep 0.2
  done
  timeout 10 sinfo -N || true
  fail "nodes $* not idle after ${secs}s"
}

# block_gpus NODES GPUS: a job holding every GPU of the cluster, so later jobs
# pend (and keep being re-scored); prints its id. (A DOWN partition would not
# survive `scontrol reconfigure`.)
block_gpus() {
  local b
  b=$(sbatch --parsable -o /dev/null -N "$1" --gres=gpu:"$2" --wrap 'sleep 300') || fail "blocker"
  wait_state 20 RUNNING "$b"
  echo "$b"
}

# pending_order JOBID...: the job ids sorted by squeue's priority, highest first
pending_order() { timeout 10 squeue -h -t PD -o '%Q %i' | sort -k1,1nr -k2,2n | awk '{print $2}' | paste -sd' '; }

# order_of JOBID...: those jobs sorted by priority (scontrol), highest first
order_of() { local j; for j in "$@"; do echo "$(prio "$j") $j"; done | sort -k1,1nr -k2,2n | awk '{print $2}' | paste -sd' '; }

# wait_order SECS "EXPECTED" JOBID...: until order_of JOBID... = EXPECTED
# (re-scores run in the background; polling keeps the tests quick and robust)
wait_order() {
  local secs=$1 want=$2 i; shift 2
  for i in $(seq $(( secs * 5 ))); do
    [ "$(order_of "$@")" = "$want" ] && return 0
    sleep 0.2
  done
  fail "priority order of $*: expected '$want', got '$(order_of "$@")' ($(timeout 10 squeue -h -o '%i %Q %b' | paste -sd';'))"
}
