#!/usr/bin/env bash
# Issue 52: one user cannot skew the node speeds select/duet learns online
# for everyone. Ranker=model (any model: `duet model init`), node2 the
# fastest by NodeSpeedsFile, the known speeds a factor 2 apart. User nobody
# submits the audit's jobs: four with --comment duet:ref=1e-300 pinned to
# node2 and eight with ref=1e300 pinned to node4 (before and after), and
# makes them look slow on node2 (sleep 4) and fast on node4 (sleep 1),
# all of one name so that they measure each other. Then:
#  - the comment's ref= is not an expectation: only the runs slurmctld
#    measured are (the learner took samples from nobody's jobs, 'move' lines
#    of uid 65534 in the state file);
#  - no node's robust estimate moved by more than 0.10, their sum by no more
#    than 0.20, and no node's GP mean by more than 0.20 (duet.conf(5));
#  - root's next 1-GPU job is ranked exactly as before the attack (the same
#    node order in its explanation) and runs on node2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
duet="${DUET:-$top_builddir/duet}"
[ -x "$duet" ] || skip "no duet program in $top_builddir"
command -v runuser >/dev/null || skip "runuser (util-linux) not installed"

duet_cluster_up --nodes 4 --mix v100:4 --speeds 0.25,2.0,0.5,1.0
model="$CLUSTER_DIR/etc/duet.model"
"$duet" model init --out "$model" --seed 7 >/dev/null || fail "duet model init"
write_duet_conf Scorer=small-first Ranker=model "PlacementModelPath=$model" \
  "NodeSpeedsFile=$CLUSTER_DIR/nodes.csv" LogLevel=verbose
state="$CLUSTER_DIR/state/duet_select_state"

# observed JOBID...: until select/duet's observer has taken every job in
observed() {
  local j i
  for j in "$@"; do
    for i in $(seq 150); do
      grep -q "select/duet: observer rwgp updated by JobId=$j " "$CTLD_LOG" && continue 2
      sleep 0.2
    done
    fail "job $j not observed within 30 s"
  done
}
# ranking JOBID: the node order of the job's placement explanation
ranking() {
  explanation "$1" | sed -n 's/.*; ranking \([^;]*\).*/\1/p' | tr ' ' '\n' | sed 's/=.*//' | paste -sd' '
}
# summary: the observer's last summary line (estimates and GP means per node)
summary() { grep 'select/duet: observer rwgp updated by' "$CTLD_LOG" | tail -n1 | sed 's/.* s): //'; }
# field_of SUMMARY NODE KEY: e.g. the GP mean (mu) of node2
field_of() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2:.*$3=\([^,]*\).*/\1/p"; }

root_job() {
  local j
  j=$(sbatch --parsable -o /dev/null --gres=gpu:1 --wrap true) || fail "sbatch (root)"
  wait_state 30 COMPLETED "$j"
  observed "$j"
  echo "$j"
}
before_job=$(root_job)
before=$(ranking "$before_job")
s0=$(summary)
note "root's job $before_job before: ranking $before on $(field "$before_job" NodeList); $s0"
[ "${before%% *}" = node2 ] || fail "node2, the fastest, is not first for root's job: $(explanation "$before_job")"

# nobody's jobs, each round in parallel; the rounds one after the other so
# that each has the earlier ones to be measured against
as_nobody() { runuser -u nobody -- "$@"; }
poison() {  # NODE REF SLEEP
  as_nobody sbatch --parsable --chdir=/tmp -o /dev/null -J poison -w "$1" --gres=gpu:1 \
    "--comment=duet:ref=$2;type=ResNet-50 (batch size 32)" --wrap "sleep $3" || fail "sbatch as nobody"
}
round() {  # NODE REF SLEEP
  local js=() k
  for k in 1 2 3 4; do js+=("$(poison "$@")"); done
  wait_state 60 COMPLETED "${js[@]}"
  observed "${js[@]}"
  [ "$(field "${js[0]}" UserId)" = "nobody(65534)" ] || fail "job ${js[0]} is $(field "${js[0]}" UserId)'s"
}
round node4 1e300 1
round node2 1e-300 4
round node4 1e300 1
s1=$(summary)
note "after nobody's 12 jobs: $s1"
note "state file: $(grep -v '^run ' "$state" | paste -sd';')"

# root's next job is ranked as before
after_job=$(root_job)
after=$(ranking "$after_job")
note "root's job $after_job after: ranking $after on $(field "$after_job" NodeList)"
[ "$after" = "$before" ] || fail "root's ranking changed from '$before' to '$after': $(explanation "$after_job")"
[ "$(field "$after_job" NodeList)" = node2 ] || fail "root's job ran on $(field "$after_job" NodeList), not node2"
# no node's GP mean moved by more than the bound
for n in node1 node2 node3 node4; do
  m0=$(field_of "$s0" "$n" mu) m1=$(field_of "$s1" "$n" mu)
  [ -n "$m0" ] && [ -n "$m1" ] || fail "no GP mean of $n in '$s0' / '$s1'"
  awk -v a="$m0" -v b="$m1" 'BEGIN { d = a - b; exit !(d <= 0.20 + 1e-9 && -d <= 0.20 + 1e-9) }' \
    || fail "$n's GP mean moved from $m0 to $m1"
done

# learned from what slurmctld measured, within the bounds
grep -q "^move [0-9]* 65534 " "$state" || fail "no sample of nobody's jobs was taken (state: $(paste -sd';' "$state"))"
awk '$1 == "est" { d = $3 < 0 ? -$3 : $3; if (d > 0.10 + 1e-9) bad = bad " " $2 "=" $3; sum += d }
     END { if (bad != "" || sum > 0.20 + 1e-9) { print "estimates" bad " sum " sum; exit 1 } }' "$state" \
  || fail "a node's estimate moved beyond the bound: $(grep '^est ' "$state" | paste -sd';')"
ctld_alive || fail "slurmctld died"
echo "PASS: nobody's 12 poisoning jobs moved the estimates within 0.10 per node and 0.20 in sum; root's ranking unchanged ($after)"
