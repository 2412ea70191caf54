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

}  // namespace

std::vector<DynamicWorkload> dynamic_workloads() {
  return {
      {"dyn-python3", {kPython, "-c", kPythonCompute, "20", "60000", "python3.out"}},
      {"dyn-sort", {"/usr/bin/sort", "-t,", "-k2,2", "-k1n", kDynamicDataFile}},
      {"dyn-gzip", {"/usr/bin/gzip", "-c", kDynamicDataFile}},
      {"dyn-md5sum", {"/usr/bin/md5sum", kDynamicDataFile}},
  };
}

bool make_dynamic_data(const std::string& workload_dir, const std::string& dir) {
  std::string gen = workload_dir + "/gendata 100000 3 > " + dir + "/" + kDynamicDataFile;
  return std::system(gen.c_str()) == 0;
}

std::vector<std::string> python_numbered_lines(int lines, int work) {
  return {kPython, "-c", kPythonLines, std::to_string(lines), std::to_string(work)};
}

bool installed(const std::vector<std::string>& argv) { return !argv.empty() && access(argv[0].c_str(), X_OK) == 0; }

}  // namespace vmha
