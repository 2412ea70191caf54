# tar czf (gzip started through /bin/sh) and tar xzf: a tree of files packed,
# listed, unpacked elsewhere and compared.
set -e
mkdir -p tree/a/b tree/c
for i in $(seq 1 50); do seq "$i" $((i * 300)) > tree/a/f$i.txt; done
for i in $(seq 1 20); do head -c $((i * 1000)) /dev/zero | tr '\0' "x" > tree/a/b/z$i; done
ln -s ../a/f1.txt tree/c/link
touch -h -d '2026-01-01 00:00:00' tree tree/a tree/a/b tree/c tree/a/* tree/a/b/* tree/c/link
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2026-01-01 00:00:00' -czf tree.tar.gz tree
tar tzvf tree.tar.gz | awk '{print $1, $3, $6}' | head -5
mkdir -p unpacked
tar xzf tree.tar.gz -C unpacked
diff -r tree unpacked/tree && echo trees equal
gzip -dc tree.tar.gz | md5sum
