#!/usr/bin/env bash
# Produces a Debian-patched, configured slurm-wlm source tree of exactly the
# installed Slurm version, for the internal headers duet's plugins need.
# Cached outside the work tree, keyed by version: the first run takes about a
# minute, later runs are instant. Prints the tree's path on stdout.
#
#   contrib/slurm-source.sh [--cache DIR]     (root: it may apt-get)
set -euo pipefail

cache=${DUET_CACHE:-/var/cache/duet}/slurm-source
while [ $# -gt 0 ]; do
  case "$1" in
    --cache) cache=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "slurm-source.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

log() { echo "slurm-source: $*" >&2; }

version=$(dpkg-query -W -f='${Version}' slurmctld 2>/dev/null || true)
[ -n "$version" ] || { log "slurmctld is not installed (run contrib/setup.sh)"; exit 1; }
upstream=${version%%-*}                     # 22.05.8-4+deb12u3 -> 22.05.8
tree="$cache/$upstream"
if [ -f "$tree/config.h" ] && [ -f "$tree/.duet-debian-version" ] \
   && [ "$(cat "$tree/.duet-debian-version")" = "$version" ]; then
  echo "$tree"; exit 0
fi

[ "$(id -u)" -eq 0 ] || { log "not cached yet and not root: cannot apt-get source"; exit 1; }

# deb-src entry for the suites the binary packages come from
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  log "adding a deb-src entry (/etc/apt/sources.list.d/duet-deb-src.sources)"
  cat > /etc/apt/sources.list.d/duet-deb-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  apt-get update -q >&2
fi

export DEBIAN_FRONTEND=noninteractive
log "installing build dependencies of slurm-wlm (for configure)"
apt-get build-dep -y -q slurm-wlm >&2

work=$(mktemp -d "${cache}.tmp.XXXXXX" 2>/dev/null || { mkdir -p "$(dirname "$cache")"; mktemp -d "${cache}.tmp.XXXXXX"; })
trap 'rm -rf "$work"' EXIT
log "fetching slurm-wlm=$version source"
# apt-get source unpacks with dpkg-source -x, which applies debian/patches in series order
( cd "$work" && apt-get source -q "slurm-wlm=$version" >&2 )
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'slurm-wlm-*' | head -n1)
[ -n "$src" ] || { log "apt-get source produced no slurm-wlm-* directory"; exit 1; }
if [ -f "$src/debian/patches/series" ]; then
  # verify that dpkg-source applied them (it records .pc/applied-patches)
  n_series=$(grep -cvE '^\s*(#|$)' "$src/debian/patches/series" || true)
  n_applied=$(grep -cvE '^\s*$' "$src/.pc/applied-patches" 2>/dev/null || echo 0)
  if [ "$n_applied" -lt "$n_series" ]; then
    log "applying debian/patches ($n_series in series)"
    ( cd "$src" && QUILT_PATCHES=debian/patches quilt push -a -q >&2 )
  fi
fi

log "autoreconf -fi"
( cd "$src" && autoreconf -fi >/dev/null 2>&1 )

# Debian's configure options: let make expand debian/rules' own recipe (dry run)
# and keep the main build's dh_auto_configure line (not the front-end emulator).
opts=$(cd "$src" && make -s -n -f debian/rules override_dh_auto_configure 2>/dev/null \
        | grep -E '^dh_auto_configure -- ' | head -n1 | sed 's/^dh_auto_configure -- //')
[ -n "$opts" ] || { log "cannot read dh_auto_configure options from debian/rules"; exit 1; }
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
log "configure $opts"
# dh_auto_configure adds these standard paths itself
( cd "$src" && eval ./configure --prefix=/usr --libdir=/usr/lib/$multiarch \
    --localstatedir=/var --runstatedir=/run "$opts" >"$work/configure.log" 2>&1 ) \
  || { log "configure failed; last lines:"; tail -20 "$work/configure.log" >&2; exit 1; }
[ -f "$src/config.h" ] || { log "configure produced no config.h"; exit 1; }
echo "$version" > "$src/.duet-debian-version"

mkdir -p "$(dirname "$tree")"
rm -rf "$tree"
mv "$src" "$tree"
log "ready: $tree"
echo "$tree"
