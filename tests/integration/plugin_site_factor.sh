#!/usr/bin/env bash
# site_factor/duet under priority/multifactor (the recommended mode):
#  - sprio lists the pending GPU jobs with a SITE column whose values follow
#    the ordering agent's scores (learned model: each job's score is in its
#    explanation), the agent's first job at the full weight, its last at 0;
#  - with Scorer=small-first the SITE values are exactly weight * rank / (n-1)
#    and the jobs' priorities (squeue %Q) follow them;
#  - another factor still counts: a nice on the top job lowers its priority
#    below the next job's by exactly the nice, its SITE unchanged;
#  - the weight comes from PrioritySiteFactorParameters and follows a
#    reconfigure; CPU-only jobs keep SITE 0, held jobs stay held.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins
duet="${DUET:-$top_builddir/duet}"
[ -x "$duet" ] || skip "no duet program in $top_builddir"

W=9000
site_factor_cluster_up --nodes 2 --mix v100:4 --set PrioritySiteFactorParameters=weight=$W
grep -q "Site factor duet (learned ordering) plugin loaded; weight 9000 .*agent channel: connected to select/duet's placement agent" "$CTLD_LOG" \
  || fail "site_factor/duet not loaded: $(grep -E 'site_factor|error' "$CTLD_LOG" | tail -5)"
model="$CLUSTER_DIR/etc/duet.model"
"$duet" model init --out "$model" --seed 7 >/dev/null || fail "duet model init"
crc=$(cksum < "$model" | cut -d' ' -f1)
agent="model(cksum $crc, format 1)"
write_duet_conf Scorer=model "ModelPath=$model" Ranker=none RescoreInterval=1 \
  FallbackAgeWeight=0 FallbackSizeWeight=0
grep -F "site_factor/duet: scorer $agent" "$CTLD_LOG" >/dev/null || fail "site_factor/duet did not load the model"
mark=$(wc -l < "$CTLD_LOG")  # from here on, no errors (before: no model yet)

blocker=$(block_gpus 2 4)  # later jobs pend and are re-scored
sub() { sbatch --parsable -o /dev/null "$@" --wrap 'sleep 1' || fail "sbatch $*"; }
type='ResNet-50 (batch size 32)'
four=$(sub --gres=gpu:4 "--comment=duet:ref=5;type=$type")
one=$(sub --gres=gpu:1 "--comment=duet:ref=5;type=$type")
three=$(sub --gres=gpu:3 "--comment=duet:ref=5;type=$type")
two=$(sub --gres=gpu:2 "--comment=duet:ref=5;type=$type")
held=$(sub --gres=gpu:1 --hold)
cpu=$(sub -n1 -c 8)  # every node has a core busy: pends
gpu_jobs=("$four" "$one" "$three" "$two")
ids_re="^($(IFS='|'; echo "${gpu_jobs[*]}"))\$"

# sprio_rows: "JOBID PRIORITY SITE NICE" for the GPU jobs, by job id
sprio_rows() { { timeout 10 sprio -h -o '%i %Y %S %N' 2>/dev/null || true; } | awk -v re="$ids_re" '$1 ~ re' | LC_ALL=C sort; }
# scores: "JOBID SCORE" from the explanations by the model, by job id
scores() {
  { timeout 10 scontrol -o show job 2>/dev/null || true; } \
    | sed -n "s/^JobId=\([0-9]*\) .*SystemComment=duet: rank [0-9]*\/4 score \([^ ]*\) by $agent.*/\1 \2/p" \
    | awk -v re="$ids_re" '$1 ~ re' | LC_ALL=C sort
}
# One consistent view: the same sprio rows before and after the explanations
# (a re-score writes factors and explanations under one job write lock).
ok=0
for i in $(seq 75); do
  a=$(sprio_rows); s=$(scores); b=$(sprio_rows)
  if [ "$a" = "$b" ] && [ "$(wc -l <<<"$a")" = 4 ] && [ "$(wc -l <<<"$s")" = 4 ]; then ok=1; break; fi
  sleep 0.2
done
[ $ok = 1 ] || fail "no sprio rows / model explanations for ${gpu_jobs[*]}: sprio '$(paste -sd';' <<<"$a")' scores '$(paste -sd';' <<<"$s")'"
timeout 10 sprio | head -n1 | grep -qw SITE || fail "sprio shows no SITE column: $(timeout 10 sprio | head -n1)"
view=$(LC_ALL=C join <(echo "$a") <(echo "$s"))  # JOBID PRIORITY SITE NICE SCORE
note "id priority site nice score: $(paste -sd';' <<<"$view")"
# every pair: a higher score has a higher SITE, equal scores an equal SITE
bad=$(awk '{id[NR]=$1; site[NR]=$3; sc[NR]=$5}
  END { for (i = 1; i <= NR; i++) for (j = 1; j <= NR; j++)
    if ((sc[i] > sc[j] && site[i] <= site[j]) || (sc[i] == sc[j] && site[i] != site[j])) print id[i] " vs " id[j] }' <<<"$view")
[ -z "$bad" ] || fail "SITE does not follow the model's scores ($bad): $(paste -sd';' <<<"$view")"
[ "$(awk '{print $3}' <<<"$view" | sort -n | tail -n1)" = $W ] || fail "the agent's first job is not at SITE $W"
[ "$(awk '{print $3}' <<<"$view" | sort -n | head -n1)" = 0 ] || fail "the agent's last job is not at SITE 0"
by_site=$(sort -k3,3nr -k1,1n <<<"$view" | awk '{print $1}' | paste -sd' ')
by_prio=$(sort -k2,2nr -k1,1n <<<"$view" | awk '{print $1}' | paste -sd' ')
[ "$by_prio" = "$by_site" ] || fail "priorities ($by_prio) do not follow SITE ($by_site)"

# a deterministic scorer: exact factors, and the priorities follow them
write_duet_conf Scorer=small-first Ranker=none RescoreInterval=1
want="$one $W 0;$two 6000 0;$three 3000 0;$four 0 0"
site_of() { sprio_rows | awk '{print $1 " " $3 " " $4}' | sort -k2,2nr | paste -sd';'; }
for i in $(seq 75); do [ "$(site_of)" = "$want" ] && break; sleep 0.2; done
[ "$(site_of)" = "$want" ] || fail "small-first SITE: expected '$want', got '$(site_of)'"
wait_order 10 "$one $two $three $four" "${gpu_jobs[@]}"
[ "$(prio "$one")" = $W ] || fail "priority of $one: $(prio "$one"), expected $W (SITE only)"

# another factor still counts: nice 4500 takes the top job below the next
timeout 10 scontrol update JobId="$one" Nice=4500 || fail "scontrol update Nice"
wait_order 10 "$two $one $three $four" "${gpu_jobs[@]}"
[ "$(prio "$one")" = 4500 ] || fail "priority of $one with nice 4500: $(prio "$one"), expected $W - 4500"
row=$(sprio_rows | awk -v j="$one" '$1 == j')
[ "$(awk '{print $3 " " $4}' <<<"$row")" = "$W 4500" ] || fail "sprio row of $one: '$row', expected SITE $W NICE 4500"
note "with nice: $(sprio_rows | paste -sd';')"

# the weight follows PrioritySiteFactorParameters at reconfigure
sed -i "s/^PrioritySiteFactorParameters=.*/PrioritySiteFactorParameters=weight=18000/" "$SLURM_CONF"
before=$(wc -l < "$CTLD_LOG")
timeout 20 scontrol reconfigure || fail "scontrol reconfigure"
wait_log_after "$before" 'site_factor/duet: weight 18000' 15
for i in $(seq 75); do [ "$(field "$two" Priority)" = 12000 ] && break; sleep 0.2; done
[ "$(prio "$two")" = 12000 ] || fail "priority of $two after weight=18000: $(prio "$two"), expected 12000"

# jobs the agent does not rank keep Slurm's semantics
[ "$(field "$cpu" JobState)" = PENDING ] || fail "CPU-only job $cpu not pending: $(field "$cpu" JobState)"
[ "$(timeout 10 sprio -h -j "$cpu" -o '%S' | tr -d ' ')" = 0 ] || fail "CPU-only job's SITE: $(timeout 10 sprio -h -j "$cpu" -o '%S')"
[ "$(prio "$held")" = 0 ] || fail "held job priority $(prio "$held"), expected 0"
! timeout 10 sprio -h -o '%i' | grep -qx " *$held" || fail "held job listed by sprio"

timeout 10 scancel "$blocker"
timeout 10 scontrol release "$held" || fail "release $held"
wait_state 60 COMPLETED "${gpu_jobs[@]}" "$held" "$cpu"
ctld_alive || fail "slurmctld died"
! tail -n +"$((mark + 1))" "$CTLD_LOG" | grep -E 'error: site_factor/duet' || fail "site_factor/duet logged errors"
echo "PASS: sprio's SITE follows the ordering agent (model, then small-first: 0..$W by rank), priorities follow SITE, nice still counts, weight from PrioritySiteFactorParameters follows reconfigure"
