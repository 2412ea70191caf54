#include "vmha/bench/dynamic_workloads.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

namespace vmha {

namespace {

const char* const kPython = "/usr/bin/python3";

// The python programs, kept as files in the source tree (the tests run the
// same ones) and copied into the guest's working directory: vmha confines a
// guest to it and the system paths.
const char* const kPythonPrograms[] = {"python_compute.py", "numbered_lines.py", "threaded_lines.py",
                                       "socket_lines.py"};

}  // namespace

std::vector<DynamicWorkload> dynamic_workloads(const std::string& workload_dir) {
  return {
      {"dyn-python3", {kPython, "python_compute.py", "20", "60000", "python3.out"}},
      {"dyn-sort", {"/usr/bin/sort", "-t,", "-k2,2", "-k1n", kDynamicDataFile}},
      {"dyn-gzip", {"/usr/bin/gzip", "-c", kDynamicDataFile}},
      {"dyn-md5sum", {"/usr/bin/md5sum", kDynamicDataFile}},
      {"dyn-py-thr4", python_threaded_lines(40, 4000, "threads.out")},
      {"dyn-omp4", omp_lines(workload_dir, 40, 300000, 4)},
      // Two compute-bound threads, on as many vCPUs as CPUs and on vCPU 0
      // alone: what the helper vCPUs bring.
      {"dyn-omp2", omp_lines(workload_dir, 20, 4000000, 2)},
      {"dyn-omp2-1vcpu", omp_lines(workload_dir, 20, 4000000, 2), 1},
      // Process trees: fork+exec cost (200 runs of true from a shell loop),
      // and a pipeline of three processes (sort's temporary files in the
      // working directory, the guest's only writable place).
      {"dyn-forkexec", {"/bin/bash", "-c", "for i in $(seq 200); do /usr/bin/true; done; echo done"}},
      {"dyn-pipeline", {"/bin/bash", "-c", "seq 1 200000 | sort -n -T . | md5sum"}},
      // Local sockets: 2000 round trips between a client and a forked
      // server waiting with epoll, through an AF_UNIX name.
      {"dyn-sockets", {kPython, "socket_lines.py", "2000", "100"}},
  };
}

bool make_dynamic_data(const std::string& workload_dir, const std::string& dir) {
  std::string gen = workload_dir + "/gendata 100000 3 > " + dir + "/" + kDynamicDataFile;
  return std::system(gen.c_str()) == 0;
}

bool copy_python_programs(const std::string& dir) {
  std::error_code ec;
  for (const char* name : kPythonPrograms) {
    std::filesystem::copy_file(std::string(VMHA_WORKLOADS_SRCDIR) + "/" + name, dir + "/" + name,
                               std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) return false;
  }
  return true;
}

std::vector<std::string> python_numbered_lines(int lines, int work) {
  return {kPython, "numbered_lines.py", std::to_string(lines), std::to_string(work)};
}

std::vector<std::string> python_threaded_lines(int lines, int work, const std::string& file) {
  return {kPython, "threaded_lines.py", std::to_string(lines), std::to_string(work), file};
}

std::vector<std::string> omp_lines(const std::string& workload_dir, int lines, int work, int threads) {
  return {workload_dir + "omp_lines", std::to_string(lines), std::to_string(work), std::to_string(threads)};
}

std::vector<CoreutilsFailover> coreutils_failovers() {
  return {
      {"sort", {"/usr/bin/sort", "-n", kNumbersFile}},
      {"gzip", {"/usr/bin/gzip", "-c", kNumbersFile}},
      {"md5sum", {"/usr/bin/md5sum", kBigFile}},
  };
}

bool make_coreutils_inputs(const std::string& dir) {
  std::vector<int> n(200000);
  std::iota(n.begin(), n.end(), 1);
  std::shuffle(n.begin(), n.end(), std::mt19937(19));
  std::string text;
  for (int v : n) text += std::to_string(v) + "\n";
  std::ofstream numbers(dir + "/" + kNumbersFile, std::ios::binary), big(dir + "/" + kBigFile, std::ios::binary);
  numbers << text;
  for (int i = 0; i < 40; ++i) big << text;
  return numbers.flush().good() && big.flush().good();
}

bool installed(const std::vector<std::string>& argv) { return !argv.empty() && access(argv[0].c_str(), X_OK) == 0; }

}  // namespace vmha
