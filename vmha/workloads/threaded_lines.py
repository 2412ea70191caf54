# python3 threaded_lines.py N W PATH: 4 threading.Thread workers that live
# for the whole run; for each of N numbered lines they each run W rounds of
# hashlib and zlib work on their share (between lines they wait on a
# threading.Barrier), the main thread merges their results under a lock,
# appends them as JSON to PATH and prints a line with a running checksum;
# then the checksum and the md5 of PATH read back. The same bytes every run.
# A %t in PATH becomes $SLURM_PROCID (0 outside Slurm): each task of a step
# writes its own file.
import hashlib, json, os, sys, threading, zlib
n, w = int(sys.argv[1]), int(sys.argv[2])
path = sys.argv[3].replace("%t", os.environ.get("SLURM_PROCID", "0"))
workers = 4
start, done = threading.Barrier(workers + 1), threading.Barrier(workers + 1)
lock = threading.Lock()
results = {}
step = [0]


def work(t):
    while True:
        start.wait()
        i = step[0]
        if i == 0:
            return
        h, c = hashlib.sha256(), 0
        for k in range(w):
            b = b"%d:%d:%d" % (i, t, k)
            h.update(b)
            c = zlib.crc32(b, c)
        with lock:
            results[t] = [h.hexdigest()[:16], c]
        done.wait()


pool = [threading.Thread(target=work, args=(t,)) for t in range(workers)]
for p in pool:
    p.start()
crc = 0
with open(path, "w") as f:
    for i in range(1, n + 1):
        step[0] = i
        start.wait()
        done.wait()
        line = json.dumps({"step": i, "workers": [results[t] for t in range(workers)]})
        f.write(line + "\n")
        f.flush()
        crc = zlib.crc32(line.encode(), crc)
        print("step", i, crc, flush=True)
step[0] = 0
start.wait()
for p in pool:
    p.join()
with open(path, "rb") as f:
    print("checksum", crc, hashlib.md5(f.read()).hexdigest())
