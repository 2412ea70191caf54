#!/usr/bin/env bash
# A rollback keeps duet's explanations: GPU jobs pend under site_factor/duet
# and select/duet (so the ordering plugin wrote "duet: rank R/N ..." into
# their SystemComment), then `duet-admin disable` switches back to Slurm's
# defaults and they start and end under select/cons_tres. Their explanation
# stays in slurmctld's job record, reaches accounting (sacct's
# SystemComment) and `duet explain JOB` shows it, from slurmctld and from
# accounting (--sacct), saying another select plugin placed the job.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
[ -f "$SITE_LIBS/site_factor_duet.so" ] || skip "site_factor/duet not built in $top_builddir"
[ -x "$top_builddir/duet" ] || skip "duet not built in $top_builddir"
admin="$top_srcdir/contrib/duet-admin"

plugdir=$(mktemp -d /tmp/duet-plugindir.XXXXXX)
cluster_up --nodes 1 --mix v100:4 --plugin-dir "$plugdir"
trap 'touch "$CLUSTER_DIR/gate"; cluster_down; rm -rf "$plugdir"' EXIT
install_example_duet_conf
grep -qx 'Explain=yes' "$CLUSTER_DIR/etc/duet.conf" || fail "duet.conf.example does not set Explain=yes"
admin() {
  "$admin" "$@" --slurm-conf "$SLURM_CONF" --build "$top_builddir" --wait 60 > "$CLUSTER_DIR/$1.out" 2>&1 \
    || { cat "$CLUSTER_DIR/$1.out"; fail "duet-admin $*"; }
}
loaded() { timeout 10 scontrol show config | sed -n "s/^$1 *= *//p"; }

gate=$CLUSTER_DIR/gate
# job ARGS...: a job running until gate or gate.JOBID exists
job() { sbatch --parsable -o /dev/null "$@" --wrap "while [ ! -e $gate ] && [ ! -e $gate.\$SLURM_JOB_ID ]; do sleep 0.2; done"; }
# ranked JOB: its SystemComment is duet's rank text
ranked() { [[ "$(explanation "$1")" == "duet: rank "* ]]; }
sacct_comment() { timeout 10 sacct -X -n -P -j "$1" --format=SystemComment | head -n1; }

admin enable --mode site-factor
[ "$(loaded SelectType)" = select/duet ] || fail "enable: slurmctld runs $(loaded SelectType)"
# all GPUs taken; two jobs pend and are ranked by duet
full=$(job --gres=gpu:4) || fail sbatch
wait_state 30 RUNNING "$full"
p1=$(job --gres=gpu:2) || fail sbatch
p2=$(job --gres=gpu:2) || fail sbatch
for _ in $(seq 300); do ranked "$p1" && ranked "$p2" && break; sleep 0.2; done
ranked "$p1" && ranked "$p2" || fail "pending jobs not ranked by duet: '$(explanation "$p1")' '$(explanation "$p2")'"
before1=$(explanation "$p1"); before2=$(explanation "$p2")
note "ranked under duet: $p1 '$before1', $p2 '$before2'"

admin disable
[ "$(loaded SelectType)" = select/cons_tres ] || fail "disable: slurmctld runs $(loaded SelectType)"
for j in "$p1" "$p2"; do
  [ "$(field "$j" JobState)" = PENDING ] || fail "job $j is $(field "$j" JobState) after disable, expected PENDING"
done
[ "$(explanation "$p1")" = "$before1" ] || fail "job $p1: SystemComment after disable '$(explanation "$p1")', was '$before1'"

# they start and end under Slurm's defaults
touch "$gate.$full"
wait_state 60 RUNNING "$p1" "$p2"
touch "$gate"
wait_jobs_done 60 "$full" "$p1" "$p2"
for j in "$p1" "$p2"; do
  want=$before1; [ "$j" = "$p2" ] && want=$before2
  got=$(sacct_comment "$j")
  [ "$got" = "$want" ] || fail "job $j: sacct SystemComment '$got', expected '$want'"
  for src in "" --sacct; do
    out=$("$top_builddir/duet" explain $src "$j" 2>&1) || fail "duet explain $src $j: $out"
    grep -qxF "$want" <<<"$out" || fail "duet explain $src $j shows no ranking: $out"
    grep -qx 'placement: not by select/duet (another select plugin gave the job its nodes)' <<<"$out" \
      || fail "duet explain $src $j does not say another plugin placed the job: $out"
  done
done
"$top_builddir/duet" explain --sacct "$p1" | sed 's/^/# /'
echo "PASS: jobs ranked under duet and run under Slurm's defaults after disable keep their explanation (sacct, duet explain)"
