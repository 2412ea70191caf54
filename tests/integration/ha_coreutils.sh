#!/usr/bin/env bash
# vmha SPANK plugin with Debian's coreutils, dynamically linked (ld.so and
# libc loaded into the guest): `sbatch --ha -N2` running sort -n of 200,000
# shuffled numbers, gzip -c of that file (each task into its own file:
# srun -o) and md5sum of a 51 MB file, with 10 ms epochs (--ha=10: more
# checkpoints to kill after). Each job first runs undisturbed:
# COMPLETED 0:0, every task's output equal to the native one, its
# checkpoints counted (AdminComment's epochs). Then again with task 0's
# (sort, md5sum) or task 1's (gzip) primary vmha killed -9 once its backup
# acknowledged a random checkpoint in the first two thirds of the running
# program's: these programs print only at their end, so the kill waits on
# the primary's statistics in the state directory (HA_KILL_ON=checkpoints),
# not on output lines. The backup on the other node resumes the program:
# COMPLETED 0:0, each task's output exactly once and equal to native
# (gzip's bytes, which gzip -t accepts), failovers=1 (ha_failover_round).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/ha_lib.sh"
for p in /usr/bin/sort /usr/bin/gzip /usr/bin/md5sum /usr/bin/shuf; do
  [ -x "$p" ] || skip "$p is not installed"
done
ha_setup --kvm epoch=20

# The inputs, the same bytes every run (a fixed random source for shuf), in
# the job's working directory: the guest may read nothing else outside the
# system paths.
seq 1 1000000 > random.src
seq 1 200000 | shuf --random-source=random.src > numbers.txt
for _ in $(seq 40); do cat numbers.txt; done > big.txt

# clean_round NAME NATIVE COMMAND: the job without a kill; sets MAX_CKPT to
# two thirds of the checkpoints one task's running program took (at least 1).
clean_round() {
  local name=$1 native=$2 cmd=$3 jid st acct epochs
  jid=$(sbatch --parsable --ha=10 -N2 -o "$name.out" --wrap "$cmd")
  st=$(ha_wait_end 120 "$jid")
  [ "$st" = COMPLETED ] || { tail -n 5 "$name.out"; ha_dump "$jid"; fail "$name: job $jid ended $st"; }
  ha_compare_tasks "$name.out" "$native" 0 1
  acct=$(ha_wait_accounting 20 "$jid")
  case "$acct" in "COMPLETED|0:0|vmha: tasks=2 epochs="*" failovers=0") ;; *) ha_dump "$jid"; fail "$name: accounting '$acct'" ;; esac
  epochs=$(sed -n 's/.*epochs=\([0-9]*\).*/\1/p' <<< "$acct")
  MAX_CKPT=$(( (epochs / 2 - 1) * 2 / 3 ))
  [ "$MAX_CKPT" -ge 1 ] || MAX_CKPT=1
  note "$name: job $jid COMPLETED, outputs equal to native, $epochs checkpoints in 2 tasks; kills after checkpoint 1..$MAX_CKPT"
}

HA_KILL_ON=checkpoints
/usr/bin/sort -n numbers.txt > sort_native.out
clean_round sort sort_native.out "srun -l /usr/bin/sort -n numbers.txt"
ha_failover_round sort_kill 0 --ha=10 sort_native.out "$MAX_CKPT" "srun -l /usr/bin/sort -n numbers.txt"

/usr/bin/md5sum big.txt > md5_native.out
clean_round md5 md5_native.out "srun -l /usr/bin/md5sum big.txt"
ha_failover_round md5_kill 0 --ha=10 md5_native.out "$MAX_CKPT" "srun -l /usr/bin/md5sum big.txt"

/usr/bin/gzip -c numbers.txt > gzip_native.gz
HA_TASK_FILES=gz%t.gz
clean_round gzip gzip_native.gz "srun -o gz%t.gz /usr/bin/gzip -c numbers.txt"
rm -f gz0.gz gz1.gz
ha_failover_round gzip_kill 1 --ha=10 gzip_native.gz "$MAX_CKPT" "srun -o gz%t.gz /usr/bin/gzip -c numbers.txt"
gzip -t < gz1.gz || fail "gzip -t refuses the output of the task whose primary was killed"
echo "ok: sort -n, md5sum and gzip -c --ha jobs COMPLETED 0:0 undisturbed and with a primary killed mid-run, every task's output equal to native"
