#!/usr/bin/env bash
# `vmha-task fence`, the fencing command an --ha task's backup runs before it
# takes over, against a real slurmctld (no KVM needed):
#  1. no mark, node2 up: no takeover (exit 1), after waiting as long as Slurm
#     could take to declare a dead node down, with the reason in its output;
#  2. the supervisor marks the primary gone while the fence waits: exit 0;
#  3. node2 hangs (its slurmd stopped, as a node that died with the
#     primary): the fence waits until Slurm itself declares node2 DOWN, then
#     allows the takeover (exit 0). A single look after 3 s, as before, said
#     no: a dead node is declared down only after SlurmdTimeout.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/ha_lib.sh"
require_cluster_tools
[ -x "$HA_TASK" ] || fail "vmha-task not built in $top_builddir"

# Slurm downs a hung node about SlurmdTimeout after its last answer (pings
# every SlurmdTimeout/3); the fence waits up to 2 x 6 + 3 + 10 = 25 s.
cluster_up --nodes 2 --set SlurmdTimeout=6 --set MessageTimeout=3
slurmd=""
trap 'rc=$?; [ -z "$slurmd" ] || kill -CONT "$slurmd" 2>/dev/null; (exit $rc); cluster_down' EXIT
dir="$CLUSTER_DIR/fence"
mkdir "$dir"

# fence_bg LOG: starts the fence on node2 in the background (FENCE_PID)
fence_bg() { "$HA_TASK" fence "$dir" node2 2> "$1" & FENCE_PID=$!; }
# wait_fence_waiting LOG: until the fence says it waits for Slurm
wait_fence_waiting() {
  for _ in $(seq 600); do
    grep -q 'waiting up to 25 s for Slurm to declare node2 DOWN' "$1" && return 0
    kill -0 "$FENCE_PID" 2>/dev/null || fail "the fence ended before it waited for Slurm: $(cat "$1")"
    sleep 0.05
  done
  fail "the fence did not start waiting for Slurm: $(cat "$1")"
}
# fence_wait: RC, the fence's exit status (it ends by its own deadline)
fence_wait() { RC=0; wait "$FENCE_PID" || RC=$?; }

# 1. Slurm still hears from node2 and there is no mark: no takeover.
fence_bg f1.log
wait_fence_waiting f1.log
fence_wait
[ "$RC" = 1 ] || fail "node2 up, no mark: fence exit $RC, not 1: $(cat f1.log)"
grep -q 'Slurm still has node2 up (State=IDLE) and its primary left no mark: it may be running; not taking over' f1.log \
  || fail "node2 up: $(cat f1.log)"

# 2. The mark comes while the fence polls Slurm.
fence_bg f2.log
wait_fence_waiting f2.log
touch "$dir/primary.gone"
fence_wait
[ "$RC" = 0 ] || fail "marked: fence exit $RC: $(cat f2.log)"
grep -q 'the primary on node2 was marked gone by its supervisor' f2.log || fail "marked: $(cat f2.log)"
rm "$dir/primary.gone"

# 3. node2 hangs: Slurm declares it DOWN, then the fence allows the takeover.
fence_bg f3.log
wait_fence_waiting f3.log
read -r slurmd _ < "$CLUSTER_DIR/pids/slurmd-node2.pid"
kill -STOP "$slurmd"
fence_wait
state=$(timeout 10 scontrol show node node2 -o | grep -o ' State=[^ ]*')
[ "$RC" = 0 ] || fail "node2 hung: fence exit $RC (Slurm:$state): $(cat f3.log)"
grep -q 'Slurm has node2 down (State=DOWN' f3.log || fail "node2 hung: $(cat f3.log)"
kill -CONT "$slurmd"
echo "ok: no takeover while node2 answers Slurm; takeover on the supervisor's mark, and once Slurm declared hung node2$state"
