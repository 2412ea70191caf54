#!/usr/bin/env bash
# Scorer=model and Ranker=model with a corrupt model file: slurmctld keeps
# running, logs one clear error per plugin naming the file, ranks by the
# age+size fallback, places in cons_tres's order and schedules;
# a fixed configuration is picked up by `scontrol reconfigure`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins

duet_cluster_up --nodes 2 --mix v100:4
model="$CLUSTER_DIR/etc/duet-ordering.model"
head -c 4096 /dev/urandom > "$model"
before=$(wc -l < "$CTLD_LOG")
write_duet_conf Scorer=model "ModelPath=$model" RescoreInterval=1 \
  FallbackAgeWeight=0 FallbackSizeWeight=1000 Ranker=model "PlacementModelPath=$model"
wait_log_after "$before" "error: priority/duet: cannot use scorer 'model': ModelPath $model: .*falling back to age\+size" 5
note "$(tail -n +"$((before + 1))" "$CTLD_LOG" | grep "cannot use scorer" | head -1)"
[ "$(tail -n +"$((before + 1))" "$CTLD_LOG" | grep -c "cannot use scorer")" = 1 ] || fail "not exactly one error line"
wait_log_after "$before" 'priority/duet: scorer fallback\(age\+size\)' 5
wait_log_after "$before" "error: select/duet: PlacementModelPath $model: .*placing by cons_tres's own order" 5
wait_log_after "$before" 'select/duet: ranker none \(cons_tres order\)' 5
ctld_alive || fail "slurmctld died on a corrupt model"

blocker=$(block_gpus 2 4)
big=$(sbatch --parsable -o /dev/null --gres=gpu:4 --wrap 'sleep 1')
small=$(sbatch --parsable -o /dev/null --gres=gpu:1 --wrap 'sleep 1')
wait_order 10 "$small $big" $big $small  # fallback with size weight only
[[ "$(explanation "$small")" == *"by fallback(age+size); waits for "* ]] || fail "explanation: $(explanation "$small")"
timeout 10 scancel "$blocker"
wait_state 30 COMPLETED "$big" "$small"
ctld_alive || fail "slurmctld died while scheduling by fallback"

# fixed configuration: picked up on reconfigure, no restart
before=$(wc -l < "$CTLD_LOG")
write_duet_conf Scorer=small-first RescoreInterval=1 Ranker=none
wait_log_after "$before" 'priority/duet: scorer small-first' 5
echo "PASS: corrupt model -> one error, fallback ranking, jobs run; reconfigure picks up the fix"
