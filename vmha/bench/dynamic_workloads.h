// `vmha bench`'s dynamically linked workloads: Debian's python3 (also with
// 4 threads), sort, gzip and md5sum and the project's OpenMP program with 4
// threads (ld.so and libc loaded into the guest), next to the project's
// static programs; and the programs the failover bench kills.
#pragma once
#include <string>
#include <vector>

namespace vmha {

struct DynamicWorkload {
  std::string name;
  std::vector<std::string> argv;  // argv[0]: an absolute path, maybe not installed; python's
                                  // programs relative to the working directory (copy_python_programs)
  int vcpus = 0;                  // VmOptions::vcpus (0: one per CPU)
};

// The data file the tools read, in the guest's working directory.
inline constexpr const char* kDynamicDataFile = "data.txt";

// python3: a pure-Python compute loop (dict updates) that writes a file and
// prints a running checksum per round (flushed: output while it runs), then
// the checksum; the same with 4 threading.Thread workers (python_threaded_lines);
// sort, gzip -c and md5sum of kDynamicDataFile; omp_lines (in workload_dir)
// with 4 threads; bash running /usr/bin/true 200 times (fork+exec cost) and
// bash running seq | sort -n | md5sum (a tree of processes and pipes).
std::vector<DynamicWorkload> dynamic_workloads(const std::string& workload_dir);

// Writes kDynamicDataFile into `dir` with the workloads' gendata. False on failure.
bool make_dynamic_data(const std::string& workload_dir, const std::string& dir);

// Copies the python programs (vmha/workloads/*.py of the source tree; the
// bench runs from the build tree, as its compiled workloads do) into `dir`,
// the guests' working directory: the python workloads name them relative
// to it. False on failure.
bool copy_python_programs(const std::string& dir);

// python3 printing `lines` numbered lines ("step I H"), each after `work`
// iterations of a pure-Python loop, then "checksum H": the same bytes every run.
std::vector<std::string> python_numbered_lines(int lines, int work);

// python3 with 4 threading.Thread workers that live for the whole run (json,
// hashlib, zlib, threading): for each of `lines` numbered lines each worker
// runs `work` rounds of hashlib and zlib, the main thread appends their
// results as JSON to `file` (in the working directory) and prints "step I C";
// then the checksum and the md5 of the file read back.
std::vector<std::string> python_threaded_lines(int lines, int work, const std::string& file);

// The OpenMP workload (vmha/workloads/omp_lines.c): `lines` numbered lines,
// each a parallel loop over `work` elements on `threads` threads.
std::vector<std::string> omp_lines(const std::string& workload_dir, int lines, int work, int threads);

// The coreutils the failover bench kills mid-run (they print only at
// their end): sort -n of kNumbersFile, gzip -c of it, md5sum of
// kBigFile, the inputs vmha_repl_failover_coreutils.sh uses.
inline constexpr const char* kNumbersFile = "numbers.txt";  // 1..200000, shuffled
inline constexpr const char* kBigFile = "big.txt";          // kNumbersFile 40 times: 51 MB
struct CoreutilsFailover {
  std::string name;  // failover-coreutils-NAME
  std::vector<std::string> argv;
};
std::vector<CoreutilsFailover> coreutils_failovers();

// Writes kNumbersFile and kBigFile into `dir` (a fixed shuffle: the same
// bytes every run). False on failure.
bool make_coreutils_inputs(const std::string& dir);

// True when argv[0] can be executed here.
bool installed(const std::vector<std::string>& argv);

}  // namespace vmha
