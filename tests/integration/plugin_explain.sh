#!/usr/bin/env bash
# Explanations that last: on an accounting cluster, select/duet (prefer-fast,
# node1 fastest) places a 1-GPU job while node1 is full; its explanation names
# the node it got and why node1 was not taken, reaches slurmdbd (sacct -o
# SystemComment; so does the rank of a job cancelled while pending) and, once
# slurmctld has forgotten the job (MinJobAge), `duet explain` prints it from
# accounting. A p100 job's ranking lists only the p100 node.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
DUET=${DUET:-$top_builddir/duet}
[ -x "$DUET" ] || skip "duet not built in $top_builddir"

# node1 fastest, then node2; node3 is the only p100 node
cluster_up --nodes 3 --mix v100:4,v100:4,p100:4 --speeds 1.0,0.8,0.5 \
  --set "PluginDir=$SLURM_PLUGINDIR:$PRIO_LIBS:$SELECT_LIBS" \
  --set PriorityType=priority/duet --set SelectType=select/duet --set MinJobAge=2
CTLD_LOG="$CLUSTER_DIR/log/slurmctld.log"
DUET_CONF="$CLUSTER_DIR/etc/duet.conf"
# RescoreInterval=1: the ordering plugin stores a job cancelled while pending
# at its next re-score, before MinJobAge=2 lets slurmctld purge it
write_duet_conf Scorer=small-first Ranker=prefer-fast "NodeSpeedsFile=$CLUSTER_DIR/nodes.csv" RescoreInterval=1

full=$(sbatch --parsable -o /dev/null -w node1 --gres=gpu:4 --wrap 'sleep 300') || fail "sbatch (node1 filler)"
wait_state 20 RUNNING "$full"
# they run until the test has read them in slurmctld (MinJobAge=2 purges an
# ended job within seconds), then end once $release exists; the explanation
# is final once a job starts
release="$CLUSTER_DIR/release-explained"
hold="while [ ! -e '$release' ]; do sleep 0.1; done"
job=$(sbatch --parsable -o /dev/null --gres=gpu:v100:1 --wrap "$hold") || fail "sbatch"
typed=$(sbatch --parsable -o /dev/null --gres=gpu:p100:1 --wrap "$hold") || fail "sbatch (p100)"
wait_state 30 RUNNING "$job" "$typed"

e=$(explanation "$job")
note "explanation of $job: $e"
[ "$(field "$job" NodeList)" = node2 ] || fail "job $job ran on $(field "$job" NodeList), expected node2"
[[ "$e" == "duet: "*"; nodes node2: prefer-fast"* ]] || fail "explanation does not name node2: $e"
[[ "$e" == *"; ranking node1=1 node2=0.8; "* ]] || fail "ranking of the v100 job: $e"
[[ "$e" == *"; not taken: node1 (needs 1 v100 GPU, 0 free)"* ]] || fail "explanation does not say why not node1: $e"
t=$(explanation "$typed")
note "explanation of p100 job $typed: $t"
[[ "$t" == *"; nodes node3: prefer-fast"*"; ranking node3=0.5"* ]] || fail "p100 job: $t"
[[ "$t" == *"; ranking node3=0.5" ]] || fail "p100 job's ranking lists other nodes: $t"

# while slurmctld holds a job, duet explain reads it there
f=$(explanation "$full")
out=$("$DUET" explain "$full") || fail "duet explain $full failed"
grep -qx "job $full: state RUNNING, priority [0-9]*, nodes node1" <<<"$out" || fail "duet explain header: $out"
grep -qx 'source: slurmctld (squeue --json)' <<<"$out" || fail "duet explain source: $out"
[[ "$f" == "duet: "*"; nodes node1: "* ]] && grep -qxF -- "$f" <<<"$out" || fail "duet explain output: $out"

# a job cancelled while pending (node1 is full) was never placed: the
# ordering plugin stores its last rank itself
pend=$(sbatch --parsable -o /dev/null -w node1 --gres=gpu:v100:4 --wrap true) || fail "sbatch (pending)"
for i in $(seq 75); do [[ "$(explanation "$pend")" == "duet: "* ]] && break; sleep 0.2; done
timeout 10 scancel "$pend" || fail "scancel $pend"
wait_state 10 CANCELLED "$pend"
pe=$(explanation "$pend")
note "explanation of $pend, cancelled while pending: $pe"
[[ "$pe" == "duet: "* ]] || fail "pending job $pend has no explanation: '$pe'"

touch "$release"
# once ended, slurmdbd has it (the job's records are written asynchronously)
acct() { { timeout 10 sacct -j "$1" -X -n -P -o State,SystemComment 2>/dev/null || true; } | tail -n1 | sed 's/^CANCELLED by [0-9]*|/CANCELLED|/'; }
for i in $(seq 150); do [ "$(acct "$job")" = "COMPLETED|$e" ] && break; sleep 0.2; done
[ "$(acct "$job")" = "COMPLETED|$e" ] || fail "sacct State,SystemComment of $job: '$(acct "$job")', expected 'COMPLETED|$e'"
for i in $(seq 150); do [ "$(acct "$typed")" = "COMPLETED|$t" ] && break; sleep 0.2; done
[ "$(acct "$typed")" = "COMPLETED|$t" ] || fail "sacct State,SystemComment of $typed: '$(acct "$typed")'"
for i in $(seq 150); do [ "$(acct "$pend")" = "CANCELLED|$pe" ] && break; sleep 0.2; done
[ "$(acct "$pend")" = "CANCELLED|$pe" ] || fail "sacct State,SystemComment of $pend: '$(acct "$pend")', expected 'CANCELLED|$pe'"

# MinJobAge=2: slurmctld purges the job at its next purge pass (every 10 s,
# skipped while backfill runs)
forgotten() { [[ "$(timeout 10 scontrol show job "$1" 2>&1 || true)" == *"Invalid job id"* ]]; }
for i in $(seq 600); do forgotten "$job" && break; sleep 0.2; done
forgotten "$job" || fail "slurmctld still holds job $job"
out=$("$DUET" explain "$job") || fail "duet explain $job (from accounting) failed"
note "duet explain after purge: $out"
grep -qx "job $job: state COMPLETED, nodes node2" <<<"$out" || fail "duet explain header: $out"
grep -qx 'source: accounting (sacct --json; slurmctld no longer holds the job)' <<<"$out" || fail "duet explain source: $out"
grep -qxF -- "$e" <<<"$out" || fail "duet explain from sacct: $out"
out=$("$DUET" explain --sacct "$typed") || fail "duet explain --sacct $typed failed"
grep -qxF -- "$t" <<<"$out" || fail "duet explain --sacct: $out"
"$DUET" explain 999999 >/dev/null 2>&1 && fail "duet explain of an unknown job succeeded"

timeout 10 scancel "$full"
ctld_alive || fail "slurmctld died"
echo "PASS: explanation names node2 and why not node1, lasts in sacct, duet explain reads it after the purge"
