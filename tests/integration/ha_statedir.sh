#!/usr/bin/env bash
# vmha SPANK plugin, as root in slurmstepd, must never act on what a user
# planted in the state directory. A user (nobody) who plants
# statedir/job<next id> -> a root directory and submits an --ha job gets the
# job refused with a clear message in slurmd's log, and the target keeps its
# owner and mode: (1) with a state directory others can write (mode 1777, as
# an earlier vmha made it), (2) with a symlink already inside a good one.
# A state directory the plugin creates itself is root-owned, mode 0711.
# Needs no KVM: the refusal comes before anything runs in vmha.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/ha_lib.sh"
command -v runuser >/dev/null || skip "runuser (util-linux) not installed"
ha_setup -- --no-accounting
# slurmstepd reads plugstack.conf at each step: the state directory can change between jobs
sed -i "s|statedir=$HA_DIR/state|statedir=$HA_DIR/open|" "$HA_DIR/plugstack.conf"
chmod 0755 "$HA_DIR"
chmod 1777 "$HA_DIR/work"
cd "$HA_DIR/work"
mkdir -m 1777 "$HA_DIR/open"
mkdir -m 0755 "$HA_DIR/victim"
echo keep > "$HA_DIR/victim/file"
victim_stat() { stat -c '%u:%g %a' "$HA_DIR/victim" "$HA_DIR/victim/file" | paste -sd' '; }
before=$(victim_stat)
as_nobody() { runuser -u nobody -- "$@"; }

# plant DIR OWNER: symlinks DIR/job<next..next+9> -> victim, made by OWNER
plant() {
  local last i
  last=$(sbatch --parsable -N1 -o /dev/null --wrap true)
  for i in $(seq $((last + 1)) $((last + 10))); do
    if [ "$2" = nobody ]; then as_nobody ln -s "$HA_DIR/victim" "$1/job$i"; else ln -s "$HA_DIR/victim" "$1/job$i"; fi
  done
}

# attack WHAT EXPECTED-LOG-TEXT: a nobody --ha job is refused, victim unchanged
attack() {
  local jid st
  jid=$(as_nobody sbatch --parsable --ha -N2 -o attack.out --wrap 'srun true')
  st=$(ha_wait_end 60 "$jid")
  note "$1: the job's output: $(head -n1 attack.out)"
  [ "$(victim_stat)" = "$before" ] || fail "$1: the planted symlink's target changed: $(victim_stat) (was $before)"
  [ "$st" = FAILED ] || fail "$1: job $jid $st although its state directory was refused: $(cat attack.out)"
  grep -qF -- "$2" attack.out || fail "$1: the job's output does not say why: $(cat attack.out)"
  grep -hF "vmha: job $jid: " "$CLUSTER_DIR"/log/slurmd-node*.log | grep -qF -- "$2" \
    || { grep -h vmha "$CLUSTER_DIR"/log/slurmd-node*.log | tail -n 5; fail "$1: slurmd log lacks '$2' for job $jid"; }
  note "$1: job $jid $st; victim still $(victim_stat); log: $(grep -hF "vmha: job $jid: " "$CLUSTER_DIR"/log/slurmd-node*.log | head -n1 | sed 's/.*vmha: /vmha: /')"
}

plant "$HA_DIR/open" nobody
attack "1777 state directory" "is writable by group or others (mode 1777)"

# A state directory the plugin creates: root's, 0711, so nobody can plant.
sed -i "s|statedir=$HA_DIR/open|statedir=$HA_DIR/good|" "$HA_DIR/plugstack.conf"
jid=$(as_nobody sbatch --parsable --ha -N2 -o first.out --wrap 'srun true')
ha_wait_end 60 "$jid" > /dev/null
[ "$(stat -c '%u %a' "$HA_DIR/good")" = "0 711" ] || fail "state directory created as $(stat -c '%u %a' "$HA_DIR/good"), expected root's, mode 0711"
as_nobody ln -s "$HA_DIR/victim" "$HA_DIR/good/job999" 2>/dev/null && fail "nobody could create an entry in the state directory"
note "state directory created root-owned, mode 0711; nobody cannot create entries in it"

plant "$HA_DIR/good" root
attack "symlink in the state directory" "exists and is not a directory (a symlink?)"
echo "ok: planted state directories refused, their targets untouched"
