# size_steps PROGRAM SECS (sourced; POSIX sh): sets STEPS to as many steps of
# `PROGRAM STEPS 4000000 1` (the steps workload) as run about SECS s natively
# on this host (30..3000), and NATIVE_S to what 30 steps took, so a kill at a
# step seen in the output lands mid-run on a fast host as on a slow one.
size_steps() {
  _t0=$(date +%s.%N)
  "$1" 30 4000000 1 > /dev/null
  NATIVE_S=$(echo "$(date +%s.%N) - $_t0" | bc)
  STEPS=$(echo "s = 30 * $2 / ($NATIVE_S + 0.001); if (s < 30) s = 30; if (s > 3000) s = 3000; scale=0; s / 1" | bc)
}
