# Shared helpers for integration tests (sourced). Each test runs its own
# cluster in a private directory and tears it down on exit, whatever happens.
set -euo pipefail
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
TESTCLUSTER="$top_srcdir/contrib/testcluster"

skip() { echo "SKIP: $*"; exit 77; }
# without NAME: DUET_TEST_WITHOUT (comma-separated) names NAME, a prerequisite
# the tests treat as missing (to see that their skips are counted)
without() { case ",${DUET_TEST_WITHOUT:-}," in *,"$1",*) return 0 ;; esac; return 1; }
fail() { echo "FAIL: $*" >&2; TEST_FAILED=1; exit 1; }
note() { echo "# $*"; }

require_cluster_tools() {
  [ "$(id -u)" -eq 0 ] && ! without root || skip "needs root to run Slurm daemons (run the README's test command as root)"
  local t
  for t in slurmctld slurmd slurmdbd munged mariadbd sbatch sacct; do
    command -v "$t" >/dev/null || skip "$t not installed (contrib/setup.sh installs it)"
  done
}

# require_duet [emujob]: DUET (and with emujob, EMUJOB), the built programs
# by absolute path (srun runs them from other directories); skips when they
# are not built. duet reads the source tree's data/ and etc/.
require_duet() {
  : "${top_builddir:=$top_srcdir}"
  local b
  b=$(cd "$top_builddir" && pwd)
  DUET="$b/duet"
  [ -x "$DUET" ] || skip "duet not built in $top_builddir"
  if [ "${1:-}" = emujob ]; then
    EMUJOB="$b/duet-emujob"
    [ -x "$EMUJOB" ] || skip "duet-emujob not built in $top_builddir"
  fi
  export DUET_DATA_DIR="$top_srcdir" DUET_ETC_DIR="$top_srcdir/etc"
}

# cluster_up ARGS...: start a cluster in $CLUSTER_DIR, export SLURM_CONF
cluster_up() {
  CLUSTER_DIR=$(mktemp -d /tmp/duet-test.XXXXXX)
  trap cluster_down EXIT
  local t0 t1 envline
  t0=$(date +%s.%N)
  envline=$("$TESTCLUSTER" up --dir "$CLUSTER_DIR" "$@") || fail "cluster did not come up (logs: $CLUSTER_DIR/log)"
  t1=$(date +%s.%N)
  eval "$envline"
  CLUSTER_UP_S=$(echo "$t1 - $t0" | bc)
  note "cluster up in ${CLUSTER_UP_S} s"
}

# A daemon that crashed, even while shutting down, fails the test (a plugin
# must never crash slurmctld or slurmd); its logs and cores are kept. So are
# the daemons' logs of a test that failed (a failure seen once in a hundred
# runs must be explainable from what it left); a test file may define
# on_test_failure to print more first.
cluster_down() {
  local rc=$? out kept
  [ -n "${CLUSTER_DIR:-}" ] || return 0
  # a trap that runs other commands first loses the status: fail() leaves a mark
  [ -z "${TEST_FAILED:-}" ] || rc=1
  if [ $rc -ne 0 ] && [ $rc -ne 77 ] && declare -F on_test_failure >/dev/null; then on_test_failure >&2 || true; fi
  if out=$("$TESTCLUSTER" down --dir "$CLUSTER_DIR" 2>&1 >/dev/null); then :
  elif grep -q 'a daemon crashed' <<<"$out"; then
    echo "FAIL: ${out#testcluster: }; logs kept in $CLUSTER_DIR/log" >&2
    CLUSTER_DIR=""
    exit 1
  fi
  if [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ -d "$CLUSTER_DIR/log" ] && kept=$(mktemp -d /tmp/duet-failed.XXXXXX); then
    cp -a "$CLUSTER_DIR/log" "$kept/" && echo "# the cluster's logs are kept in $kept/log" >&2
  fi
  if [ -z "${KEEP_CLUSTER:-}" ]; then rm -rf "$CLUSTER_DIR"; fi
  return $rc
}

# wait_jobs_done SECS JOBID...: until sacct shows a final state for every job
wait_jobs_done() {
  local secs=$1 i j st done; shift
  for i in $(seq $((secs * 2))); do
    done=1
    for j in "$@"; do
      st=$(timeout 10 sacct -X -n -P -j "$j" --format=State 2>/dev/null | head -n1)
      case "$st" in COMPLETED|FAILED|CANCELLED*|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) ;; *) done=0 ;; esac
    done
    [ $done = 1 ] && return 0
    sleep 0.5
  done
  timeout 10 squeue || true
  fail "jobs $* not finished in accounting after ${secs}s"
}

# live_daemons DIR: PIDs of live (non-zombie) processes that belong to the cluster in DIR
live_daemons() {
  local p st
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = $$ ] && continue
    if grep -qszF -- "$1" "$p/cmdline" \
       || grep -qsz "^SLURM_CONF=$1/" "$p/environ" 2>/dev/null; then
      st=$(sed 's/^.*) //' "$p/stat" 2>/dev/null | cut -d' ' -f1)
      case "$st" in Z|X|"") ;; *) echo "${p#/proc/}" ;; esac
    fi
  done
}
