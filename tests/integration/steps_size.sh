# size_steps PROGRAM SECS (sourced; POSIX sh): sets STEPS to as many steps of
# `PROGRAM STEPS 4000000 1` (the steps workload) as take about SECS s of CPU
# time natively on this host (30..3000), and NATIVE_S to the CPU time 30
# steps took. CPU time, not wall time: a loaded host that slows the
# measurement (30 steps once took 3.3 s of wall time under load) and is idle
# again by the run made a program sized by wall time end 10x sooner than
# meant, before a test could see it running. The program then runs at
# least about SECS s, longer on a loaded host.
# The CPU time of the children this shell waited for, in seconds, read
# from `times` run in this shell (a $(...) subshell is a new process: its
# children's times start at zero).
_cpu_of() { sed -n 2p "$1" | sed 's/m/ /g; s/s//g' | awk '{ printf "%.6f", $1 * 60 + $2 + $3 * 60 + $4 }'; }

# cpu_seconds PROGRAM ARGS...: runs it natively (stdout to /dev/null) and
# sets CPU_S to the CPU time it took, all its threads together; returns its
# exit status.
cpu_seconds() {
  _times=$(mktemp "${TMPDIR:-/tmp}/steps_size.XXXXXX")
  times > "$_times.0"
  "$@" > /dev/null
  _rc=$?
  times > "$_times.1"
  CPU_S=$(echo "$(_cpu_of "$_times.1") - $(_cpu_of "$_times.0")" | bc)
  rm -f "$_times" "$_times.0" "$_times.1"
  return $_rc
}

# scaled N SECS MIN MAX: N scaled from the CPU_S that cpu_seconds measured to
# SECS s of CPU time, within MIN..MAX (an integer).
scaled() {
  echo "n = $1 * $2 / ($CPU_S + 0.001); if (n < $3) n = $3; if (n > $4) n = $4; scale=0; n / 1" | bc
}

size_steps() {
  cpu_seconds "$1" 30 4000000 1
  NATIVE_S=$CPU_S
  STEPS=$(scaled 30 "$2" 30 3000)
}

# size_step_work PROGRAM STEPS SECS: sets WORK so that `PROGRAM STEPS WORK 1`
# takes about SECS s of CPU time natively (20000..4000000): a fixed number of
# lines whose pace follows the host, so a kill timed by the lines out finds
# the program still running however loaded the host is.
size_step_work() {
  size_steps "$1" 1
  WORK=$(echo "w = $3 * 30 * 4000000 / ($2 * ($NATIVE_S + 0.001)); if (w < 20000) w = 20000; if (w > 4000000) w = 4000000; scale=0; w / 1" | bc)
}
