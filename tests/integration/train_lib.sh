# Shared by the training workers' tests (sourced after lib.sh): a small
# contended trace and cluster, and the arguments of a few seconds of training.

# write_train_inputs DIR: DIR/trace.csv (240 jobs) and DIR/cluster.csv (16 GPUs);
# TRAIN_ARGS: the rest but --out and --episodes
write_train_inputs() {
  awk 'BEGIN { print "job_id,submit,duration,num_gpus,user"
    for (i = 0; i < 240; i++) { big = i % 4 == 0
      printf "%d,%d,%d,%d,%s\n", i + 1, i * 45, big ? 5400 + 60 * (i % 5) : 300 + 10 * (i % 7), big ? 4 : 1, big ? "bob" : "ann" } }' \
    > "$1/trace.csv"
  printf '%s\n' machine,gpu_type,num_gpus,rack m0,V100,4,r0 m1,V100,4,r0 m2,K80,4,r1 m3,K80,4,r1 > "$1/cluster.csv"
  TRAIN_ARGS=(--trace "$1/trace.csv" --cluster "$1/cluster.csv" --seed 4 --bc-episodes 1
              --window 60 --eval-every 1 --keep last)
}

# wait_bounded SECS PID: waits for PID (a child of this shell) at most SECS;
# returns its exit status, or fails the test if it is still running
wait_bounded() {
  local i st
  for i in $(seq $(( $1 * 10 ))); do
    st=$(sed 's/^.*) //' "/proc/$2/stat" 2>/dev/null | cut -d' ' -f1 || true)
    case "$st" in Z|X|"") wait "$2"; return $? ;; esac
    sleep 0.1
  done
  kill -KILL "$2" 2>/dev/null || true
  fail "process $2 still running after $1 s"
}
