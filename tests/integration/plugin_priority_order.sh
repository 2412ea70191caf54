#!/usr/bin/env bash
# priority/duet: pending GPU jobs get priorities in the scorer's order
# (`squeue -o %Q`), the order follows the configured scorer, held jobs and
# admin-set priorities keep Slurm's semantics, and CPU-only jobs get one fixed
# priority below the GPU jobs, moved by nice.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins

duet_cluster_up --nodes 2 --mix v100:4
write_duet_conf Scorer=small-first RescoreInterval=1 Ranker=none
blocker=$(block_gpus 2 4)  # jobs pend and are re-scored, none starts

sub() { sbatch --parsable -o /dev/null "$@" --wrap 'sleep 1' || fail "sbatch $*"; }
big=$(sub --gres=gpu:4)
mid=$(sub --gres=gpu:2)
small=$(sub --gres=gpu:1)
held=$(sub --gres=gpu:1 --hold)
admin=$(sub --gres=gpu:4)
cpu=$(sub -n1)
timeout 10 scontrol update JobId="$admin" Priority=777 || fail "admin priority"
wait_order 10 "$small $mid $big" $big $mid $small
[ "$(pending_order | tr ' ' '\n' | grep -E "^($big|$mid|$small)\$" | paste -sd' ')" = "$small $mid $big" ] \
  || fail "squeue %Q order: $(timeout 10 squeue -h -o '%i %Q %b')"
for j in $big $mid $small $held $admin $cpu; do note "job $j priority $(prio "$j") $(explanation "$j")"; done
[ "$(prio "$held")" = 0 ] || fail "held job priority $(prio "$held"), expected 0"
[ "$(prio "$admin")" = 777 ] || fail "admin-set priority became $(prio "$admin")"
# CPU-only: a fixed priority below every GPU job (FIFO among themselves by
# Slurm's submit-time tie-break), never Slurm's top priority
[ "$(prio "$cpu")" -gt 0 ] && [ "$(prio "$cpu")" -lt "$(prio "$big")" ] \
  || fail "CPU-only job priority $(prio "$cpu") not below the lowest GPU job's $(prio "$big")"
cpu2=$(sub -n1)
[ "$(prio "$cpu2")" = "$(prio "$cpu")" ] || fail "CPU-only jobs' priorities differ: $(prio "$cpu") vs $(prio "$cpu2")"
cpu_nice=$(sub -n1 --nice=100)
[ "$(prio "$cpu_nice")" = "$(( $(prio "$cpu") - 100 ))" ] || fail "CPU-only job with nice 100: $(prio "$cpu_nice")"
for i in $(seq 50); do [[ "$(explanation "$small")" == "duet: rank 1/3 score"*"by small-first; "* ]] && break; sleep 0.2; done
[[ "$(explanation "$small")" == "duet: rank 1/3 score"*"by small-first; "* ]] \
  || fail "explanation of $small: $(explanation "$small")"

# the same jobs under another scorer: age only = oldest first
write_duet_conf Scorer=fallback FallbackSizeWeight=0 FallbackAgeWeight=1000 RescoreInterval=1 Ranker=none
wait_order 10 "$big $mid $small" $big $mid $small

# Slurm's DebugFlags switch on the per-job lines (LogLevel stays info), as
# for any priority plugin
before=$(wc -l < "$CTLD_LOG")
timeout 10 scontrol setdebugflags +Priority || fail "setdebugflags"
wait_log_after "$before" "priority/duet: JobId=$big gpus=4 score=[^ ]* priority=" 15
note "with DebugFlags=Priority: $(tail -n +"$before" "$CTLD_LOG" | grep -m1 "priority/duet: JobId=$big gpus=" | sed 's/^\[[^]]*\] //')"
timeout 10 scontrol setdebugflags -Priority || fail "setdebugflags"

# a new job is slotted at submit, before the next re-score
write_duet_conf Scorer=small-first RescoreInterval=3600 Ranker=none
tiny=$(sub --gres=gpu:1)
[ "$(prio "$tiny")" -gt "$(prio "$big")" ] || fail "new 1-GPU job $(prio "$tiny") not above 4-GPU job $(prio "$big")"

# released and scheduled: jobs run and the plugin keeps going
timeout 10 scancel "$blocker"
timeout 10 scontrol release "$held" || fail "release"
wait_state 40 COMPLETED "$small" "$mid" "$big" "$held" "$cpu" "$cpu2" "$cpu_nice" "$tiny"
ctld_alive || fail "slurmctld died"
echo "PASS: priorities follow the scorer (small-first, then age), held/admin jobs keep Slurm semantics, CPU-only jobs below the GPU jobs"
