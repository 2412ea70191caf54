#!/usr/bin/env bash
# Files others can change are refused (duet.conf(5), FILE PERMISSIONS): a
# world-writable model gives one error line per plugin naming the file and
# the cause, then the usual fallback, and slurmctld keeps running; fixing
# the mode and `scontrol reconfigure` loads it. A world-writable duet.conf
# is refused the same way and all keys keep their defaults.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
require_duet_plugins

duet_cluster_up --nodes 2 --mix v100:4
model="$CLUSTER_DIR/etc/duet-ordering.model"  # also the default ModelPath
cp "$top_srcdir/models/duet.model" "$model"
chmod 666 "$model"
why="refused: the file is writable by others \(mode 0666\); only root and SlurmUser \(uid [0-9]+\) may be able to change it"
before=$(wc -l < "$CTLD_LOG")
write_duet_conf Scorer=model "ModelPath=$model" Ranker=model "PlacementModelPath=$model"
wait_log_after "$before" "error: priority/duet: cannot use scorer 'model': ModelPath $model: $why; falling back to age\+size" 5
wait_log_after "$before" "error: select/duet: PlacementModelPath $model: $why; placing by cons_tres's own order" 5
note "$(tail -n +"$((before + 1))" "$CTLD_LOG" | grep "refused" | head -1)"
[ "$(tail -n +"$((before + 1))" "$CTLD_LOG" | grep -c "refused")" = 2 ] || fail "not one refusal per plugin"
ctld_alive || fail "slurmctld died on a refused model"

chmod 644 "$model"
before=$(wc -l < "$CTLD_LOG")
write_duet_conf Scorer=model "ModelPath=$model" Ranker=model "PlacementModelPath=$model"
wait_log_after "$before" 'priority/duet: scorer model\(cksum ' 5

# duet.conf itself: Scorer=small-first is refused with the file, the default
# Scorer=model loads the (now trusted) default ModelPath
write_duet_conf Scorer=small-first Ranker=none
chmod 666 "$DUET_CONF"
before=$(wc -l < "$CTLD_LOG")
timeout 20 scontrol reconfigure || fail "scontrol reconfigure failed"
wait_log_after "$before" "error: priority/duet: $DUET_CONF:0:0: $why \(all defaults\)" 15
wait_log_after "$before" 'priority/duet: scorer model\(cksum ' 15
ctld_alive || fail "slurmctld died on a refused duet.conf"
chmod 644 "$DUET_CONF"
echo "PASS: world-writable model and duet.conf refused in one line each, fallback, fixed mode picked up"
