# python3 python_compute.py ROUNDS N PATH: a pure-Python loop over a dict
# that keeps growing (it dirties memory as well as computing), a line per
# round written to PATH and a running checksum printed; then the checksum
# (vmha bench's dyn-python3).
import sys, zlib
rounds, n, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
d = {}
crc = 0
with open(path, "w") as f:
    for r in range(rounds):
        for i in range(n):
            k = (i * 2654435761 + r) % 1000003
            d[k] = d.get(k, 0) + i
        line = "%d %d %d\n" % (r, len(d), sum(d.values()) % 1000000007)
        f.write(line)
        crc = zlib.crc32(line.encode(), crc)
        print("round", r, crc, flush=True)
print("checksum", crc)
