#include "vmha/bench/dynamic_workloads.h"

#include <unistd.h>

#include <cstdlib>

namespace vmha {

namespace {

const char* const kPython = "/usr/bin/python3";

// argv: ROUNDS N OUTPUT. The dict keeps growing, so the loop dirties memory
// as well as computing; the file is written a line per round.
const char* const kPythonCompute = R"(import sys, zlib
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
)";

// argv: LINES WORK.
const char* const kPythonLines = R"(import sys
n, w = int(sys.argv[1]), int(sys.argv[2])
h = 0
for i in range(1, n + 1):
    for j in range(w):
        h = (h * 31 + i + j) % 1000000007
    print("step", i, h, flush=True)
print("checksum", h)
)";

// argv: LINES WORK FILE. The workers wait on a barrier between lines, so
// every checkpoint holds all five threads.
const char* const kPythonThreads = R"(import hashlib, json, sys, threading, zlib
n, w, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
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
)";

}  // namespace

std::vector<DynamicWorkload> dynamic_workloads(const std::string& workload_dir) {
  return {
      {"dyn-python3", {kPython, "-c", kPythonCompute, "20", "60000", "python3.out"}},
      {"dyn-sort", {"/usr/bin/sort", "-t,", "-k2,2", "-k1n", kDynamicDataFile}},
      {"dyn-gzip", {"/usr/bin/gzip", "-c", kDynamicDataFile}},
      {"dyn-md5sum", {"/usr/bin/md5sum", kDynamicDataFile}},
      {"dyn-py-thr4", python_threaded_lines(40, 4000, "threads.out")},
      {"dyn-omp4", omp_lines(workload_dir, 40, 300000, 4)},
  };
}

bool make_dynamic_data(const std::string& workload_dir, const std::string& dir) {
  std::string gen = workload_dir + "/gendata 100000 3 > " + dir + "/" + kDynamicDataFile;
  return std::system(gen.c_str()) == 0;
}

std::vector<std::string> python_numbered_lines(int lines, int work) {
  return {kPython, "-c", kPythonLines, std::to_string(lines), std::to_string(work)};
}

std::vector<std::string> python_threaded_lines(int lines, int work, const std::string& file) {
  return {kPython, "-c", kPythonThreads, std::to_string(lines), std::to_string(work), file};
}

std::vector<std::string> omp_lines(const std::string& workload_dir, int lines, int work, int threads) {
  return {workload_dir + "omp_lines", std::to_string(lines), std::to_string(work), std::to_string(threads)};
}

bool installed(const std::vector<std::string>& argv) { return !argv.empty() && access(argv[0].c_str(), X_OK) == 0; }

}  // namespace vmha
