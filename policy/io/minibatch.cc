#include "policy/io/minibatch.h"

#include <fstream>

#include "policy/io/csv.h"

namespace duet {

MinibatchJob read_minibatch(const std::string& path) {
  auto f = CsvReader::open(path);
  CsvReader r(*f, path);
  CsvHeader h = read_header(r, {"", "worker", "gpu", "time", "batch_time_norm"}, {});
  MinibatchJob job;
  job.source = path;
  const int c_w = h.find("worker"), c_t = h.find("time"), c_v = h.find("batch_time_norm"), c_g = h.find("gpu");
  while (r.next()) {
    r.expect_fields(5, 5);
    r.integer(0, "row index");
    MinibatchSample s;
    int64_t w = r.integer(c_w, "worker");
    if (w < 0 || w > 1000000) r.fail(c_w, "field 'worker': expected a worker number from 0 to 1000000");
    s.worker = static_cast<int>(w);
    r.non_negative(c_g, "gpu");
    int64_t t = r.integer(c_t, "time");
    if (t < 0 || t > 1000000000) r.fail(c_t, "field 'time': expected an iteration index >= 0");
    s.time = static_cast<int>(t);
    s.value = r.number(c_v, "batch_time_norm");
    if (s.value <= 0) r.fail(c_v, "field 'batch_time_norm': expected a number > 0");
    job.samples.push_back(s);
  }
  if (job.samples.empty()) throw InputError(path, r.line(), 0, "no samples");
  return job;
}

}  // namespace duet
