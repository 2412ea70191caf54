// `vmha bench`: each workload natively and inside vmha under each tracker —
// run time, slowdown, system calls/s, dirty pages/s — plus micro-benchmarks
// (system-call round trip, first-write fault cost). A benchmark, not a test.
#pragma once
#include <string>

namespace vmha {

struct BenchOptions {
  bool native_only = false;
  std::string workload_dir;  // default: vmha/workloads next to the vmha binary
  int reps = 3;
  int harvest_ms = 50;  // harvester thread period
  std::string only;
};

int bench_command(const BenchOptions& opts);

}  // namespace vmha
