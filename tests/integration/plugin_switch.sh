#!/usr/bin/env bash
# contrib/duet-admin switches a cluster with accounting from Slurm's defaults
# (priority/multifactor, select/cons_tres) to duet (site_factor/duet,
# select/duet) and back while GPU jobs run and others pend:
#  - after each switch slurmctld runs the configured plugins and
#    `duet-admin status` says so, and names the running jobs that started
#    under select/duet;
#  - every job, started before or after a switch (one starts an srun step
#    after it), completes: none is left in squeue (none stays in CG), sacct
#    says COMPLETED with gres/gpu=2 in its AllocTRES, and every GPU is free
#    again; no slurmd rejects an RPC for an unknown select plugin;
#  - slurm.conf gets back its old lines, select_duet.so stays installed and
#    `duet-admin uninstall` refuses while jobs of the select/duet period remain;
#  - no job starts before every node registered again: node1's slurmd is
#    stopped (SIGSTOP) right after its restart, which holds open slurmctld's
#    window before node1's registration (cons_tres started a pending GPU job
#    without its GPUs in it). A job that pended across the switch becomes
#    eligible in the window and another is submitted then: neither starts
#    while it is open (before duet-admin drained the nodes across the switch,
#    one of them started at once); the switch ends once node1 registers;
#  - a held job stays held across both switches;
#  - a disable interrupted in that window leaves the nodes drained, and
#    running it again finishes it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
[ -f "$SITE_LIBS/site_factor_duet.so" ] || skip "site_factor/duet not built in $top_builddir"
admin="$top_srcdir/contrib/duet-admin"

# plugins go where duet-admin installs them: the first PluginDir entry
plugdir=$(mktemp -d /tmp/duet-plugindir.XXXXXX)
# (node1's slurmd is stopped for a while: slurmctld must not set it DOWN)
cluster_up --nodes 2 --mix v100:4 --plugin-dir "$plugdir" --set SlurmdTimeout=300
slurmd1=""  # node1's slurmd while it is stopped
trap '[ -z "$slurmd1" ] || kill -CONT "$slurmd1" 2>/dev/null; cluster_down; rm -rf "$plugdir"' EXIT
conf=$SLURM_CONF
cp "$conf" "$CLUSTER_DIR/slurm.conf.before"
CTLD_LOG="$CLUSTER_DIR/log/slurmctld.log"
# duet.conf and the model as README says (enable checks them first)
install_example_duet_conf

admin() { "$admin" "$@" --slurm-conf "$conf" --build "$top_builddir" --wait 60; }
# (slurmctld shows PrioritySiteFactorPlugin as (null): duet-admin status checks it)
loaded() { timeout 10 scontrol show config | sed -n "s/^$1 *= *//p"; }
expect_loaded() {  # expect_loaded KEY VALUE
  [ "$(loaded "$1")" = "$2" ] || fail "slurmctld runs $1=$(loaded "$1"), expected $2"
}

# gated GATE: a job script that runs until GATE or GATE.JOBID exists
gated() { echo "while [ ! -e $1 ] && [ ! -e $1.\$SLURM_JOB_ID ]; do sleep 0.2; done"; }
gpu_job() { sbatch --parsable -o /dev/null --gres=gpu:2 "$@"; }
# switch_jobs GATE: the jobs of one switch, 2 GPUs each, running until GATE:
# job_a on node1 runs an srun step once released, i.e. after the switch;
# job_x and job_b fill node2; job_p waits for job_x to end, so it pends
# across the switch and is eligible once job_x ends in the window, while
# node1 has 2 GPUs free.
switch_jobs() {
  job_a=$(gpu_job -w node1 --wrap "$(gated "$1"); srun -n1 true") || fail sbatch
  job_x=$(gpu_job -w node2 --wrap "$(gated "$1")") || fail sbatch
  job_b=$(gpu_job -w node2 --wrap "$(gated "$1")") || fail sbatch
  job_p=$(gpu_job --dependency=afterany:"$job_x" --wrap "$(gated "$1")") || fail sbatch
  wait_state 30 RUNNING "$job_a" "$job_x" "$job_b"
  [ "$(field "$job_p" JobState)" = PENDING ] || fail "job $job_p is $(field "$job_p" JobState), expected PENDING"
}
# all_complete JOBID...: none left in squeue (none stuck in CG), sacct says
# COMPLETED
in_squeue() { timeout 10 squeue -h -o %i | grep -xF -f <(printf '%s\n' "$@"); }
all_complete() {
  for _ in $(seq 300); do
    in_squeue "$@" >/dev/null || break
    sleep 0.2
  done
  if in_squeue "$@" >/dev/null; then
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
# gpus_free: every node's GPUs are free again (none left counted as in use)
gpus_free() {
  local used
  for _ in $(seq 150); do
    used=$(timeout 10 scontrol show node -d | sed -n 's/^ *GresUsed=//p' | sort -u) || used=""
    [ "$used" = "gpu:v100:0(IDX:N/A)" ] && return 0
    sleep 0.2
  done
  timeout 10 scontrol show node -d | grep -E 'NodeName|GresUsed' || true
  fail "GPUs still counted as in use after every job ended"
}
no_rejected_rpcs() {
  ! grep -hE 'select plugin .* not found|Malformed RPC|Incomplete job' "$CLUSTER_DIR"/log/slurm*.log \
    || fail "an RPC or saved job was rejected for its select plugin (above)"
}

# ---- the window before node1's registration --------------------------------
# admin_in_background CMD ARG...: `duet-admin CMD ARG...` with node1's slurmd
# stopped right after the restart; admin_pid is duet-admin's own process
# (not a subshell: killing it interrupts the switch), its output goes to
# CLUSTER_DIR/CMD.out
admin_in_background() {
  local pidfile=$CLUSTER_DIR/pids/slurmd-node1.pid
  "$admin" "$@" --slurm-conf "$conf" --build "$top_builddir" --wait 60 \
    --restart-slurmd "$TESTCLUSTER restart-slurmd --dir $CLUSTER_DIR && read -r p _ < $pidfile && kill -STOP \$p" \
    > "$CLUSTER_DIR/$1.out" 2>&1 &
  admin_pid=$!
}
node_field() { timeout 10 scontrol show node -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1; }
registered() { local t; t=$(node_field "$1" SlurmdStartTime); [ -n "$t" ] && [ "$t" != None ]; }
# in_window SELECT OUT GATE: once slurmctld runs SELECT, node2 has
# registered and node1 has not, ends job_x (node2) so that job_p is eligible,
# submits another GPU job, waits until the scheduler has looked at both since
# then, and checks that neither started. Sets window_job to the new job's id
# and slurmd1 to node1's slurmd.
in_window() {
  local want=$1 out=$2 gate=$3 j t new ok
  for _ in $(seq 300); do
    kill -0 "$admin_pid" 2>/dev/null || { cat "$out" >&2; fail "duet-admin ended before node1 registered"; }
    [ "$(loaded SelectType 2>/dev/null)" = "$want" ] && registered node2 && break
    sleep 0.2
  done
  if [ "$(loaded SelectType)" != "$want" ] || ! registered node2; then
    cat "$out" >&2; fail "slurmctld with $want and node2 registered not within 60 s"
  fi
  read -r slurmd1 _ < "$CLUSTER_DIR/pids/slurmd-node1.pid"
  registered node1 && fail "node1 registered while its slurmd was stopped"
  touch "$gate.$job_x"
  wait_state 30 COMPLETED "$job_x"
  # evaluated after t: by this slurmctld (its scheduler runs at the submission)
  t=$(date +%s); while [ "$(date +%s)" -le "$t" ]; do sleep 0.1; done
  new=$(gpu_job --wrap "$(gated "$gate")") || fail sbatch
  for _ in $(seq 300); do
    ok=1
    for j in "$new" "$job_p"; do
      if [ "$(field "$j" JobState)" != PENDING ]; then
        timeout 10 scontrol show job -d "$j" || true
        fail "job $j started while node1 had not registered again"
      fi
      [ "$(date -d "$(field "$j" LastSchedEval)" +%s)" -gt "$t" ] || ok=0
    done
    [ $ok = 1 ] && break
    sleep 0.2
  done
  [ $ok = 1 ] || fail "jobs $new $job_p not considered by the scheduler within 60 s"
  note "while node1 had not registered: job $job_x ended, jobs $job_p and $new pend ($(field "$new" Reason))"
  window_job=$new
}
# held_still JOBID REASON: the job is pending, held as before
held_still() {
  [ "$(field "$1" JobState)" = PENDING ] && [ "$(field "$1" Reason)" = "$2" ] \
    || fail "held job $1 is $(field "$1" JobState) ($(field "$1" Reason)), expected PENDING ($2)"
}
drained_nodes() { timeout 10 sinfo -h -N -t drain,draining -o %N | sort -u | paste -sd,; }

expect_loaded SelectType select/cons_tres
expect_loaded PriorityType priority/multifactor

# a held GPU job stays held across both switches
held=$(sbatch --parsable -o /dev/null --hold --gres=gpu:2 --wrap true) || fail sbatch
wait_state 30 PENDING "$held"
held_reason=$(field "$held" Reason)

# ---- defaults -> duet, with jobs running under select/cons_tres ----------
switch_jobs "$CLUSTER_DIR/go1"
js1=("$job_a" "$job_x" "$job_b" "$job_p")
admin_in_background enable --mode site-factor
in_window select/duet "$CLUSTER_DIR/enable.out" "$CLUSTER_DIR/go1"
js1+=("$window_job")
kill -CONT "$slurmd1"; slurmd1=""
wait "$admin_pid" || { cat "$CLUSTER_DIR/enable.out"; fail "duet-admin enable"; }
grep -q 'resumed ' "$CLUSTER_DIR/enable.out" || { cat "$CLUSTER_DIR/enable.out"; fail "enable resumed no node"; }
[ -z "$(drained_nodes)" ] || fail "nodes left drained after enable: $(drained_nodes)"
held_still "$held" "$held_reason"
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
gpus_free
no_rejected_rpcs
note "defaults -> duet: ${#js1[@]} jobs completed"

# ---- duet -> defaults, with jobs running under select/duet ---------------
switch_jobs "$CLUSTER_DIR/go2"
js2=("$job_a" "$job_x" "$job_b" "$job_p")
running=$(timeout 10 squeue -h -t R -o %i | sort -n | paste -sd' ')
status=$(admin status)
grep -qx "running jobs started under select/duet: $running" <<<"$status" \
  || fail "status does not name the running jobs ($running): $status"
# interrupted while node1 has not registered: the nodes stay drained
admin_in_background disable
in_window select/cons_tres "$CLUSTER_DIR/disable.out" "$CLUSTER_DIR/go2"
js2+=("$window_job")
kill "$admin_pid"; wait "$admin_pid" || true
status=$(admin status)
grep -q '^switch interrupted: ' <<<"$status" || fail "status does not say the switch was interrupted: $status"
kill -CONT "$slurmd1"; slurmd1=""
for _ in $(seq 150); do registered node1 && break; sleep 0.2; done
registered node1 || fail "node1 not registered 30 s after its slurmd went on"
[ "$(drained_nodes)" = node1,node2 ] || fail "after the interrupted disable: drained nodes '$(drained_nodes)', expected node1,node2"
for j in "$window_job" "$job_p"; do [ "$(field "$j" JobState)" = PENDING ] || fail "job $j started on a node drained for the switch"; done
# run again: switches again and resumes the nodes
admin disable > "$CLUSTER_DIR/disable.out" 2>&1 \
  || { cat "$CLUSTER_DIR/disable.out"; fail "duet-admin disable (again, after the interruption)"; }
grep -q 'resumed node1,node2' "$CLUSTER_DIR/disable.out" || { cat "$CLUSTER_DIR/disable.out"; fail "disable resumed not both nodes"; }
[ -z "$(drained_nodes)" ] || fail "nodes left drained after disable: $(drained_nodes)"
held_still "$held" "$held_reason"
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
running=$(tr ' ' '\n' <<<"$running" | grep -vx "$job_x" | paste -sd' ')  # job_x ended in the window
grep -qx "running jobs started under select/duet: $running" <<<"$status" \
  || fail "status after disable does not name the jobs still running from select/duet ($running)"
[ -f "$plugdir/select_duet.so" ] || fail "disable removed select_duet.so while its jobs run"
if admin uninstall > "$CLUSTER_DIR/uninstall.out" 2>&1; then fail "uninstall did not refuse"; fi
grep -q 'still known to slurmctld' "$CLUSTER_DIR/uninstall.out" || fail "uninstall: $(cat "$CLUSTER_DIR/uninstall.out")"
grep -q '^switch interrupted' <<<"$status" && fail "status after disable: still says interrupted"
touch "$CLUSTER_DIR/go2"
# (refused while the job's accounting record is not set up again after the
# restart: "try again in a bit")
for _ in $(seq 150); do timeout 10 scontrol release "$held" 2>/dev/null && break; sleep 0.2; done
[ "$(field "$held" Reason)" != "$held_reason" ] || fail "scontrol release $held: still $held_reason after 30 s"
js2+=("$held")
all_complete "${js2[@]}"
gpus_free
no_rejected_rpcs
echo "PASS: defaults -> duet -> defaults with jobs running, pending, held and submitted while a node had not registered: all $(( ${#js1[@]} + ${#js2[@]} )) completed with their GPUs, plugins switched (disable interrupted once and run again)"
