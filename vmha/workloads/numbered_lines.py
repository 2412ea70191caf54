# python3 numbered_lines.py N W: N numbered lines, each after W rounds of a
# pure-Python hash loop, then the checksum: a dynamically linked interpreter
# whose output shows how far it got (ha_dynamic.sh,
# vmha_repl_failover_python.sh, vmha bench).
import sys
n, w = int(sys.argv[1]), int(sys.argv[2])
h = 0
for i in range(1, n + 1):
    for j in range(w):
        h = (h * 31 + i + j) % 1000000007
    print("step", i, h, flush=True)
print("checksum", h)
