// `vmha bench`'s dynamically linked workloads: Debian's python3, sort, gzip
// and md5sum (ld.so and libc loaded into the guest), next to the project's
// static programs; and the python3 program the failover bench kills.
#pragma once
#include <string>
#include <vector>

namespace vmha {

struct DynamicWorkload {
  std::string name;
  std::vector<std::string> argv;  // argv[0]: an absolute path, maybe not installed
};

// The data file the tools read, in the guest's working directory.
inline constexpr const char* kDynamicDataFile = "data.txt";

// python3: a pure-Python compute loop (dict updates) that writes a file and
// prints a running checksum per round (flushed: output while it runs), then
// the checksum; sort, gzip -c and md5sum of kDynamicDataFile.
std::vector<DynamicWorkload> dynamic_workloads();

// Writes kDynamicDataFile into `dir` with the workloads' gendata. False on failure.
bool make_dynamic_data(const std::string& workload_dir, const std::string& dir);

// python3 printing `lines` numbered lines ("step I H"), each after `work`
// iterations of a pure-Python loop, then "checksum H": the same bytes every run.
std::vector<std::string> python_numbered_lines(int lines, int work);

// True when argv[0] can be executed here.
bool installed(const std::vector<std::string>& argv);

}  // namespace vmha
