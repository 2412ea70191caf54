#!/usr/bin/env bash
# duet train as the tasks of a Slurm job step: `srun -N 2 -n 2 duet train`
# on two nodes of the loopback cluster finds its rank, the workers' count and
# task 0's store in the step's environment (node1 is no host name here:
# its NodeAddr comes from scontrol), and writes the same model bytes as
# `duet train --workers 2` with the same seed; only task 0 prints. The
# tasks' store needs the secret of --store-secret: a file others may read is
# refused before any task listens.
. "$(dirname "$0")/lib.sh"
require_cluster_tools
require_duet
. "$(dirname "$0")/train_lib.sh"

cluster_up --nodes 2 --no-accounting
work="$CLUSTER_DIR/work"; mkdir -p "$work"
write_train_inputs "$work"

"$DUET" train "${TRAIN_ARGS[@]}" --episodes 2 --workers 2 --out "$work/local.duet" > "$work/local.out" 2>&1 \
  || fail "duet train --workers 2 failed: $(cat "$work/local.out")"
secret="$work/secret"
(umask 077; head -c 32 /dev/urandom | base64 > "$secret")
# -K: a task that fails ends the step; the timeouts are the workers' own
timeout 300 srun -K -N 2 -n 2 --chdir "$work" "$DUET" train "${TRAIN_ARGS[@]}" --episodes 2 --worker-timeout 120 \
  --store-secret "$secret" --out "$work/slurm.duet" > "$work/slurm.out" 2> "$work/slurm.err" \
  || fail "srun -N 2 -n 2 duet train failed: $(cat "$work/slurm.err")"
cmp -s "$work/local.duet" "$work/slurm.duet" \
  || fail "2 Slurm tasks and --workers 2 wrote different models (seed 4)"
[ "$(grep -c '^model ' "$work/slurm.out")" = 1 ] || fail "expected task 0's report alone, got: $(cat "$work/slurm.out")"
"$DUET" model info "$work/slurm.duet" | grep -q -- '--workers 2' || fail "the model's provenance does not say --workers 2"
note "2 tasks on node1 and node2 and --workers 2: the same $(stat -c %s "$work/slurm.duet")-byte model"
chmod 644 "$secret"
! timeout 300 srun -K -N 2 -n 2 --chdir "$work" "$DUET" train "${TRAIN_ARGS[@]}" --episodes 2 --worker-timeout 120 \
  --store-secret "$secret" --out "$work/open.duet" > /dev/null 2> "$work/open.err" \
  || fail "duet train ran with a secret file others may read"
grep -q "secret file $secret is refused: others may read or change it (mode 0644" "$work/open.err" \
  || fail "no clear refusal of the open secret file: $(cat "$work/open.err")"
[ ! -e "$work/open.duet" ] || fail "a model was written with a refused secret"
echo "PASS: srun -N 2 -n 2 duet train writes the model --workers 2 writes; an open secret file is refused"
