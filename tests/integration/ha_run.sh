#!/usr/bin/env bash
# vmha SPANK plugin: `sbatch --ha -N2 --wrap 'srun -l steps ...'` runs each
# task of the step under vmha-task -> `vmha run --backup`, with a `vmha
# backup` in a step of its own on the other node (the process tree and the
# slurmd log show it); every task's output equals the native run's; sacct
# shows the job COMPLETED 0:0 with the replication figures in AdminComment.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/ha_lib.sh"
ha_setup --kvm epoch=20
# Long enough (about 6 s natively on this host) for the scan below to see
# the processes while the program runs, on a fast host too; under stress-ng
# --cpu 2 one scan took 1.4 s and a 2 s program ended before both backups
# were seen.
ha_size_steps 6
ARGS="$STEPS 4000000 1"
note "$STEPS steps (30 took ${HA_NATIVE_S} s of CPU natively)"
"$HA_WL/steps" $ARGS > native.out

t0=$(date +%s.%N)
jid=$(sbatch --parsable --ha -N2 -o job.out --wrap "srun -l $HA_WL/steps $ARGS")
# Scan the process tree while the job runs, until both tasks' primaries and
# two backups were seen. A primary counts once its parent's name could be
# read (a loaded host once showed one whose parent's command line was still
# empty).
seen_p="" seen_b=""
for i in $(seq 1200); do
  seen_p+=$(ha_pids "$jid" "^[^ ]*/vmha run --backup" | awk 'NF >= 5')$'\n'
  seen_b+=$(ha_pids "$jid" "^[^ ]*/vmha backup --listen")$'\n'
  [ "$(awk 'NF {print $2}' <<< "$seen_p" | sort -u | wc -l)" -ge 2 ] \
    && [ "$(awk 'NF {print $1}' <<< "$seen_b" | sort -u | wc -l)" -ge 2 ] && break
  [ $((i % 20)) = 0 ] || continue
  # an empty state is scontrol not answering in time (a loaded host), not the end
  case "$(ha_state "$jid")" in PENDING|RUNNING|CONFIGURING|"") ;; *) break ;; esac
done
primaries=$(awk 'NF' <<< "$seen_p" | sort -u)
backups=$(awk 'NF' <<< "$seen_b" | sort -u)
[ "$(awk '{print $2}' <<< "$primaries" | sort -u | wc -l)" -ge 2 ] || { ha_dump "$jid"; fail "expected the primaries of tasks 0 and 1, saw: $primaries"; }
note "primaries (pid rank step node parent): $(echo "$primaries" | paste -sd';')"
note "backups   (pid rank step node parent): $(echo "$backups" | paste -sd';')"
[ "$(wc -l <<< "$backups")" -ge 2 ] || fail "expected 2 vmha backup processes, got: $backups"
while read -r pid rank step node parent; do
  [ "$parent" = vmha-task ] || fail "vmha run $pid (task $rank) is not a child of vmha-task (parent: $parent)"
  [ "$step" = 0 ] || fail "primary of task $rank runs in step $step, not the job's step 0"
  [ -n "$(awk -v n="$node" '$3 != 0 && $4 != n' <<< "$backups")" ] \
    || fail "no backup on a node other than $node (task $rank)"
done <<< "$primaries"

st=$(ha_wait_end 90 "$jid")
t1=$(date +%s.%N)
[ "$st" = COMPLETED ] || { tail -n 5 job.out; ha_dump "$jid"; fail "job $jid ended $st"; }
ha_compare_tasks job.out native.out 0 1
grep -q "job $jid step 0 task 0 .*runs under .*vmha-task" "$CLUSTER_DIR"/log/slurmd-node*.log \
  || fail "no 'runs under vmha-task' line for job $jid in the slurmd logs"
acct=$(ha_wait_accounting 20 "$jid")
case "$acct" in "COMPLETED|0:0|vmha: tasks=2 epochs="*" failovers=0") ;; *) ha_dump "$jid"; fail "accounting: '$acct'" ;; esac
epochs=$(echo "$acct" | sed -n 's/.*epochs=\([0-9]*\).*/\1/p')
[ "$epochs" -gt 2 ] || fail "accounting: only $epochs epochs"
for _ in $(seq 50); do [ -e "$HA_DIR/state/job$jid" ] || break; sleep 0.2; done
[ ! -e "$HA_DIR/state/job$jid" ] || fail "the job epilog left $HA_DIR/state/job$jid behind"
note "native and vmha-protected outputs identical ($(wc -l < native.out) lines per task)"
echo "ok: --ha job ran in vmha with backups on the other node in $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s; sacct: $acct"
