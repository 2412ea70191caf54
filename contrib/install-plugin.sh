#!/bin/sh
# install-plugin.sh LIBTOOL_LA DESTDIR: installs a libtool-built Slurm plugin
# into Slurm's PluginDir. Copy to a temporary name in the same directory, then
# rename: a running slurmctld keeps its mapping of the old file, whereas
# overwriting a loaded .so in place crashes it.
set -eu
la=$1; dest=$2
dlname=$(sed -n "s/^dlname='\(.*\)'/\1/p" "$la")
[ -n "$dlname" ] || { echo "install-plugin: no dlname in $la" >&2; exit 1; }
so="$(dirname "$la")/.libs/$dlname"
[ -f "$so" ] || { echo "install-plugin: $so not built" >&2; exit 1; }
mkdir -p "$dest"
tmp="$dest/.$dlname.tmp.$$"
cp "$so" "$tmp"
chmod 755 "$tmp"
mv -f "$tmp" "$dest/$dlname"
echo "installed $dest/$dlname"
