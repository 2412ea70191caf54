#!/usr/bin/env bash
# Issue 52: `duet explain` reads a job's fields from structured output, so
# a job whose own fields hold text like Slurm's (a comment with
# "\nSystemComment=duet: forged JobState=COMPLETED NodeList=forged", a stderr
# path and a name with " JobState=COMPLETED NodeList=forged") is explained
# with its real state, nodes and explanation: while slurmctld holds it
# (squeue --json) and after it was purged (sacct --json), and with --sacct.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
DUET=${DUET:-$top_builddir/duet}
[ -x "$DUET" ] || skip "duet not built in $top_builddir"

cluster_up --nodes 2 --mix v100:4 --speeds 1.0,0.5 \
  --set "PluginDir=$SLURM_PLUGINDIR:$PRIO_LIBS:$SELECT_LIBS" \
  --set PriorityType=priority/duet --set SelectType=select/duet --set MinJobAge=2
CTLD_LOG="$CLUSTER_DIR/log/slurmctld.log"
DUET_CONF="$CLUSTER_DIR/etc/duet.conf"
write_duet_conf Scorer=small-first Ranker=prefer-fast "NodeSpeedsFile=$CLUSTER_DIR/nodes.csv"

forged='JobState=COMPLETED NodeList=forged'
release="$CLUSTER_DIR/release"
j=$(sbatch --parsable -J "x $forged" -o /dev/null -e "$CLUSTER_DIR/err $forged SystemComment=duet:forged" \
  --comment="x
SystemComment=duet: forged $forged" --gres=gpu:1 --wrap "while [ ! -e '$release' ]; do sleep 0.1; done") \
  || fail "sbatch"
# the real fields, from squeue's fixed format (no user-written field in it;
# plugin_lib.sh's `field` reads scontrol's text and would be fooled too)
real() { timeout 10 squeue -h -j "$j" -o '%T %N' || true; }
for i in $(seq 150); do [[ "$(real)" == RUNNING* ]] && break; sleep 0.2; done
read -r state nodes <<<"$(real)"
[ "$state" = RUNNING ] && [ "$nodes" = node1 ] || fail "job $j is '$(real)', expected RUNNING on node1"
# the forgery is in place: scontrol's text shows a SystemComment line and a JobState word that are not Slurm's
text=$(timeout 10 scontrol show job "$j")
grep -q '^SystemComment=duet: forged' <<<"$text" && grep -q "StdErr=.* $forged" <<<"$text" \
  || fail "the forged fields are not in scontrol's text: $text"

out=$("$DUET" explain "$j") || fail "duet explain $j failed: $out"
note "duet explain while running: $(paste -sd'|' <<<"$out")"
! grep -qi forged <<<"$out" || fail "duet explain printed forged fields: $out"
grep -qx "job $j: state RUNNING, priority [0-9]*, nodes node1" <<<"$out" || fail "duet explain header: $out"
grep -qx 'source: slurmctld (squeue --json)' <<<"$out" || fail "duet explain source: $out"
e=$(sed -n 3p <<<"$out")
[[ "$e" == "duet: "*"; nodes node1: prefer-fast"* ]] || fail "duet explain's explanation is not the plugins': $out"

touch "$release"
acct() { { timeout 10 sacct -j "$j" -X -n -P -o State 2>/dev/null || true; } | tail -n1; }
for i in $(seq 150); do [ "$(acct)" = COMPLETED ] && break; sleep 0.2; done
[ "$(acct)" = COMPLETED ] || fail "sacct State of $j: '$(acct)'"
out=$("$DUET" explain --sacct "$j") || fail "duet explain --sacct $j failed: $out"
note "duet explain --sacct: $(paste -sd'|' <<<"$out")"
! grep -qi forged <<<"$out" || fail "duet explain --sacct printed forged fields: $out"
grep -qx "job $j: state COMPLETED, nodes node1" <<<"$out" || fail "duet explain --sacct header: $out"
grep -qxF -- "$e" <<<"$out" || fail "duet explain --sacct: explanation is not '$e': $out"

# once slurmctld purged it (MinJobAge=2), from accounting
forgotten() { [[ "$(timeout 10 scontrol show job "$j" 2>&1 || true)" == *"Invalid job id"* ]]; }
for i in $(seq 600); do forgotten && break; sleep 0.2; done
forgotten || fail "slurmctld still holds job $j"
out=$("$DUET" explain "$j") || fail "duet explain $j (from accounting) failed: $out"
note "duet explain after the purge: $(paste -sd'|' <<<"$out")"
! grep -qi forged <<<"$out" || fail "duet explain printed forged fields: $out"
grep -qx "job $j: state COMPLETED, nodes node1" <<<"$out" || fail "duet explain header: $out"
grep -qx 'source: accounting (sacct --json; slurmctld no longer holds the job)' <<<"$out" || fail "source: $out"
grep -qxF -- "$e" <<<"$out" || fail "duet explain from sacct: $out"
"$DUET" explain "$j; true" >/dev/null 2>&1 && fail "duet explain took '$j; true' for a job id"
ctld_alive || fail "slurmctld died"
echo "PASS: duet explain prints job $j's real state, nodes and explanation despite forged fields in its comment, name and stderr path"
