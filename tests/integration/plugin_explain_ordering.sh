#!/usr/bin/env bash
# Explanations that last without select/duet: site_factor/duet (under
# priority/multifactor) and then priority/duet, each with Slurm's own
# select/cons_tres on an accounting cluster. Two GPU jobs pend behind a
# blocker and are ranked (small-first: the 1-GPU job first); a 4-GPU job
# ranked behind them says why it waits (rank, GPUs, jobs ahead) in
# SystemComment and `duet explain`, as does a job waiting for its --begin
# time; once they have
# run, `sacct -o SystemComment` shows the ordering decision each had when it
# started (rank, score, scorer), a job cancelled while pending keeps its last
# rank, and once slurmctld has purged the jobs (MinJobAge) `duet explain`
# prints them from accounting.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
[ -f "$SITE_LIBS/site_factor_duet.so" ] || skip "site_factor/duet not built in $top_builddir"
DUET=${DUET:-$top_builddir/duet}
[ -x "$DUET" ] || skip "duet not built in $top_builddir"

# acct JOBID: "State|SystemComment" as slurmdbd has them ("CANCELLED by UID" as CANCELLED)
acct() { { timeout 10 sacct -j "$1" -X -n -P -o State,SystemComment 2>/dev/null || true; } | tail -n1 | sed 's/^CANCELLED by [0-9]*|/CANCELLED|/'; }
wait_acct() {
  local i
  for i in $(seq 150); do [ "$(acct "$1")" = "$2" ] && return 0; sleep 0.2; done
  fail "$ORDER_PLUGIN: sacct State,SystemComment of $1: '$(acct "$1")', expected '$2'"
}
forgotten() { [[ "$(timeout 10 scontrol show job "$1" 2>&1 || true)" == *"Invalid job id"* ]]; }

# run_case PLUGIN CLUSTER_ARGS...
run_case() {
  ORDER_PLUGIN=$1; shift
  cluster_up --nodes 1 --mix v100:4 --set MinJobAge=2 "$@"
  CTLD_LOG="$CLUSTER_DIR/log/slurmctld.log"
  grep -q "agent channel: no placement agent" "$CTLD_LOG" || fail "$ORDER_PLUGIN: not loaded without select/duet"
  printf '%s\n' Scorer=small-first RescoreInterval=1 > "$CLUSTER_DIR/etc/duet.conf"
  local before; before=$(wc -l < "$CTLD_LOG")
  timeout 20 scontrol reconfigure || fail "scontrol reconfigure"
  wait_log_after "$before" "$ORDER_PLUGIN: scorer small-first" 15

  # the jobs run until the test has read their explanations in slurmctld
  local release="$CLUSTER_DIR/release" blocker one two gone e1 e2 eg out
  local hold="while [ ! -e '$release' ]; do sleep 0.1; done"
  blocker=$(block_gpus 1 4)
  two=$(sbatch --parsable -o /dev/null --gres=gpu:2 --wrap "$hold") || fail "sbatch"
  one=$(sbatch --parsable -o /dev/null --gres=gpu:1 --wrap "$hold") || fail "sbatch"
  gone=$(sbatch --parsable -o /dev/null --gres=gpu:4 --wrap true) || fail "sbatch"
  local i
  for i in $(seq 75); do [[ "$(explanation "$gone")" == "duet: rank 3/3 "* ]] && break; sleep 0.2; done
  eg=$(explanation "$gone")
  # why it waits: its rank, the GPUs it asks for against node1's free ones
  # (the blocker holds all 4), the jobs ranked ahead of it with their GPUs
  local why="; waits for 4 GPUs on one node: node1 has the most free, 0 of 4; ahead: $one (1 GPU), $two (2 GPUs)"
  [[ "$eg" == "duet: rank 3/3 score "*" by small-first$why" ]] || fail "$ORDER_PLUGIN: explanation of pending $gone: '$eg'"
  out=$("$DUET" explain "$gone") || fail "duet explain $gone (pending) failed"
  grep -qxF -- "$eg" <<<"$out" || fail "$ORDER_PLUGIN: duet explain of pending $gone: $out"
  note "$ORDER_PLUGIN: duet explain $gone: $out"
  timeout 10 scancel "$gone" || fail "scancel $gone"
  timeout 10 scancel "$blocker" || fail "scancel $blocker"
  wait_state 30 RUNNING "$one" "$two"
  e1=$(explanation "$one")
  e2=$(explanation "$two")
  note "$ORDER_PLUGIN: $one: $e1; $two: $e2; cancelled $gone: $eg"
  [[ "$e1" == "duet: rank 1/"*" score "*" by small-first; "* ]] || fail "$ORDER_PLUGIN: explanation of $one: '$e1'"
  [[ "$e2" == "duet: rank 2/"*" score "*" by small-first; "* ]] || fail "$ORDER_PLUGIN: explanation of $two: '$e2'"
  # a job not eligible before its --begin time says so
  local later el
  later=$(sbatch --parsable -o /dev/null --begin=now+3600 --gres=gpu:1 --wrap true) || fail "sbatch --begin"
  for i in $(seq 75); do [[ "$(explanation "$later")" == *"; waits for its begin time "* ]] && break; sleep 0.2; done
  el=$(explanation "$later")
  note "$ORDER_PLUGIN: --begin job $later: $el"
  [[ "$el" == "duet: rank 1/1 score "*"; waits for its begin time "????-??-??T??:??:??" (sbatch --begin); no job ahead wants these GPUs" ]] \
    || fail "$ORDER_PLUGIN: explanation of --begin job $later: '$el'"
  timeout 10 scancel "$later" || fail "scancel $later"

  touch "$release"
  wait_acct "$one" "COMPLETED|$e1"
  wait_acct "$two" "COMPLETED|$e2"
  wait_acct "$gone" "CANCELLED|$eg"

  for i in $(seq 600); do forgotten "$one" && break; sleep 0.2; done
  forgotten "$one" || fail "slurmctld still holds job $one"
  out=$("$DUET" explain "$one") || fail "duet explain $one (from accounting) failed"
  grep -qx 'source: accounting (sacct --json; slurmctld no longer holds the job)' <<<"$out" || fail "duet explain source: $out"
  grep -qxF -- "$e1" <<<"$out" || fail "$ORDER_PLUGIN: duet explain from sacct: $out"
  ctld_alive || fail "slurmctld died"
  # (before duet.conf, the default scorer had no model)
  ! tail -n +"$((before + 1))" "$CTLD_LOG" | grep -E "error: $ORDER_PLUGIN" || fail "$ORDER_PLUGIN logged errors"
  cluster_down
  CLUSTER_DIR=""
}

run_case site_factor/duet --set "PluginDir=$SLURM_PLUGINDIR:$SITE_LIBS" \
  --set PriorityType=priority/multifactor --set PrioritySiteFactorPlugin=site_factor/duet
run_case priority/duet --set "PluginDir=$SLURM_PLUGINDIR:$PRIO_LIBS" --set PriorityType=priority/duet
echo "PASS: with select/cons_tres, site_factor/duet's and priority/duet's ordering explanations reach sacct (started and cancelled jobs) and duet explain reads them after the purge"
