#!/bin/sh
# The TCP path between two hosts of the test's own: two network namespaces
# joined by a veth pair (10.231.N.1 and .2, nothing else routes there), UCX
# limited to TCP (UCX_TLS=tcp). The primary runs in one, the backup in the
# other: the `steps` workload gives its native output in both modes; then
# the primary is killed mid-run and the backup, across the namespaces,
# finishes it with every line exactly once.
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
[ "$(id -u)" -eq 0 ] || { echo "SKIP: creating network namespaces needs root"; exit 77; }
command -v ip >/dev/null || { echo "SKIP: no ip command (Debian: iproute2)"; exit 77; }
vmha_repl_setup
cd "$T" || exit 1

NA=vmha-a-$$ NB=vmha-b-$$ NET=10.231.$(($$ % 250))
netns_cleanup() {
  vmha_repl_cleanup
  ip netns del "$NA" 2>/dev/null
  ip netns del "$NB" 2>/dev/null
}
trap netns_cleanup EXIT
if ! ip netns add "$NA" 2>/dev/null || ! ip netns add "$NB" 2>/dev/null; then
  echo "SKIP: cannot create network namespaces here"; exit 77
fi
ip link add "va$$" type veth peer name "vb$$" && ip link set "va$$" netns "$NA" && ip link set "vb$$" netns "$NB" &&
  ip -n "$NA" addr add "$NET.1/24" dev "va$$" && ip -n "$NB" addr add "$NET.2/24" dev "vb$$" &&
  ip -n "$NA" link set "va$$" up && ip -n "$NB" link set "vb$$" up &&
  ip -n "$NA" link set lo up && ip -n "$NB" link set lo up || { echo "FAIL: cannot set up the veth pair"; exit 1; }
export UCX_TLS=tcp UCX_LOG_FILE="$T/ucx.log"  # UCX logs to stdout otherwise

# backup_in_b OUT: a backup in namespace B on $NET.2 appending to OUT; sets BACKUP_PID, ADDR
backup_in_b() {
  rm -f addr backup.stats
  ip netns exec "$NB" "$VMHA" backup --listen "$NET.2:0" --key key --lease-ms 300 --accept-timeout 20 \
    --address-file addr --stats-file "$T/backup.stats" --fence-cmd true --stdout "$1" 2>> backup.err &
  BACKUP_PID=$!
  for _ in $(seq 1500); do [ -s addr ] && break; sleep 0.02; done
  [ -s addr ] || { echo "FAIL: the backup in $NB did not listen"; cat backup.err; exit 1; }
  ADDR=$(cat addr)
  case "$ADDR" in "$NET.2:"*) ;; *) echo "FAIL: backup address $ADDR is not in $NB's network"; exit 1 ;; esac
}

ARGS="150 20000 1"
"$WL/steps" $ARGS > native.out
fail=0
for mode in async stop-copy; do
  : > out; : > backup.err
  backup_in_b "$T/out"
  ip netns exec "$NA" "$VMHA" run --memory 256 --mode $mode --epoch-ms 10 --backup "$ADDR" --key key -- \
    "$WL/steps" $ARGS >> out 2> primary.err &
  PRIMARY_PID=$!
  wait_bounded "$PRIMARY_PID" 60; prc=$WAIT_RC; PRIMARY_PID=
  wait_bounded "$BACKUP_PID" 20; brc=$WAIT_RC; BACKUP_PID=
  if [ "$prc" != 0 ] || [ "$brc" != 0 ] || ! cmp -s native.out out || grep -q "backup lost" primary.err; then
    echo "FAIL: $mode over TCP between namespaces: primary exit $prc, backup exit $brc"
    cat primary.err backup.err | head -5; diff native.out out | head -5; fail=1
  else
    echo "ok: $mode, primary in $NA, backup at $ADDR in $NB (UCX_TLS=tcp): native output, both exit 0"
  fi
done

# Failover across the namespaces (up to three tries, until the kill hits a
# running primary). The program is sized to run about 2 s natively on this
# host and the kill comes once a fifth of its lines are out: with the fixed
# 150 short steps above, a fast or loaded host could end the program before
# the kill (no takeover) three times in a row.
size_steps "$WL/steps" 2
FSTEPS=$STEPS
FARGS="$FSTEPS 4000000 1"
"$WL/steps" $FARGS > fnative.out
resumed=0
for try in 1 2 3; do
  : > out; : > backup.err
  backup_in_b "$T/out"
  ip netns exec "$NA" "$VMHA" run --memory 256 --mode async --epoch-ms 10 --backup "$ADDR" --key key -- \
    "$WL/steps" $FARGS >> out 2> primary.err &
  PRIMARY_PID=$!
  for _ in $(seq 6000); do [ "$(wc -l < out)" -ge $((FSTEPS / 5)) ] && break; sleep 0.005; done
  kill -9 "$PRIMARY_PID" 2>/dev/null; wait "$PRIMARY_PID" 2>/dev/null; PRIMARY_PID=
  lines=$(wc -l < out)
  wait_bounded "$BACKUP_PID" 30; brc=$WAIT_RC; BACKUP_PID=
  if ! backup_took_over; then
    echo "# try $try: no takeover ($lines of $(wc -l < fnative.out) lines out; backup exit $brc): $(tail -n 2 backup.err | tr '\n' ' ')"
    continue
  fi
  resumed=1
  if [ "$brc" != 0 ] || ! cmp -s fnative.out out; then
    echo "FAIL: failover over TCP: backup exit $brc"; diff fnative.out out | head -5; head -5 backup.err; fail=1
  else
    echo "ok: primary killed with $lines of $(wc -l < fnative.out) lines out; the backup in $NB finished, every line once: resumed from checkpoint $(stats_value "$T/backup.stats" checkpoint)"
  fi
  break
done
[ "$resumed" = 1 ] || { echo "FAIL: no kill hit a running primary in 3 tries"; fail=1; }
exit $fail
