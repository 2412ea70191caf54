#!/usr/bin/env bash
# vmha SPANK plugin: what is refused at submission, and what is left alone.
# --ha on a one-node job (option, #SBATCH line or SLURM_HA) is rejected by
# sbatch and srun before anything is submitted, with a message that says how
# to fix it; so is --ha with GPUs (--gres=gpu, --gpus*, or srun in an
# allocation that holds them: a GPU's state is not replicated); bad --ha=
# values are rejected with what was expected; a --wrap
# with or without srun is accepted; a job without --ha runs untouched.
# Needs no KVM (nothing runs in vmha).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/ha_lib.sh"
ha_setup -- --no-accounting

jobs_known() { timeout 10 squeue -h -t all -o %i | wc -l; }

# rejected WHAT EXPECTED-TEXT CMD...: CMD fails, says EXPECTED-TEXT, submits nothing
rejected() {
  local what=$1 want=$2 before rc; shift 2
  before=$(jobs_known)
  set +e; "$@" > "$HA_DIR/cmd.out" 2> "$HA_DIR/cmd.err"; rc=$?; set -e
  [ $rc -ne 0 ] || fail "$what: accepted (exit 0): $(cat "$HA_DIR/cmd.out")"
  grep -qF -- "$want" "$HA_DIR/cmd.err" || fail "$what: message lacks '$want': $(cat "$HA_DIR/cmd.err")"
  [ "$(jobs_known)" = "$before" ] || fail "$what: a job was submitted anyway"
  note "$what: rejected: $(grep -F -- "$want" "$HA_DIR/cmd.err" | head -n1)"
}

one_node="a protected job needs a second node for the backups"
rejected "sbatch --ha (no -N)" "$one_node" sbatch --ha --wrap true
rejected "sbatch --ha -N1" "but this job asks for 1 node (add -N 2 or more" sbatch --ha -N1 --wrap true
rejected "SLURM_HA=yes sbatch" "$one_node" env SLURM_HA=yes sbatch --wrap true
printf '#!/bin/sh\n#SBATCH --ha=20\n#SBATCH -N 1\ntrue\n' > script.sh
rejected "#SBATCH --ha=20 -N 1" "$one_node" sbatch script.sh
rejected "srun --ha -N1" "$one_node" timeout 30 srun --ha -N1 true
rejected "salloc --ha" "$one_node" timeout 30 salloc --ha true

gpus="asks for GPUs"
rejected "sbatch --ha --gres=gpu:1" "--ha: this job asks for GPUs (--gres=gpu:1)" sbatch --ha -N2 --gres=gpu:1 --wrap true
rejected "sbatch --ha --gpus=2" "$gpus (--gpus=2)" sbatch --ha -N2 --gpus=2 --wrap true
rejected "sbatch --ha --gpus-per-node" "$gpus" sbatch --ha -N2 --gpus-per-node=1 --wrap true
rejected "srun --ha --gres=gpu" "$gpus" timeout 30 srun --ha -N2 --gres=gpu true
rejected "srun --ha in an allocation with GPUs" "$gpus (SLURM_JOB_GPUS=0)" env SLURM_JOB_GPUS=0 SLURM_JOB_NUM_NODES=2 timeout 30 srun --ha -N2 true

bad="expected an epoch length in milliseconds (1-60000)"
rejected "sbatch --ha=abc" "--ha=abc: $bad" sbatch --ha=abc -N2 --wrap true
rejected "sbatch --ha=70000" "--ha=70000: $bad" sbatch --ha=70000 -N2 --wrap true
rejected "srun --ha=-5" "--ha=-5: $bad" timeout 30 srun --ha=-5 -N2 true
rejected "SLURM_HA=fast sbatch" "SLURM_HA=fast: $bad" env SLURM_HA=fast sbatch -N2 --wrap true
rejected "sbatch --ha=0" "--ha=0: $bad" sbatch --ha=0 -N2 --wrap true
# A --wrap without srun runs the batch script in vmha (ha_batch.sh), one
# with srun protects its steps: both are accepted (held, so they never run).
jid=$(sbatch --parsable --hold --ha -N2 --wrap './prog') || fail "sbatch --ha --wrap without srun refused"
scancel "$jid"
jid=$(sbatch --parsable --hold --ha -N2 --wrap 'echo start; /usr/bin/srun ./prog') || fail "sbatch --ha with srun refused"
scancel "$jid"

# Without --ha the plugin leaves jobs alone: the program runs itself.
jid=$(sbatch --parsable -N1 -o plain.out --wrap 'srun sh -c "echo plain \$SLURM_PROCID"')
st=$(ha_wait_end 30 "$jid"); [ "$st" = COMPLETED ] || fail "job without --ha: $st"
grep -qx "plain 0" plain.out || fail "job without --ha: output $(cat plain.out)"
grep -q "vmha" plain.out && fail "job without --ha ran under vmha: $(cat plain.out)"
grep -q "job $jid .*runs under" "$CLUSTER_DIR"/log/slurmd-*.log && fail "the plugin touched a job without --ha"
note "job without --ha: untouched ($(head -n1 plain.out))"
echo "ok: one-node --ha jobs and bad values rejected at submission; jobs without --ha untouched"
