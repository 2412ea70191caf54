#include "policy/io/trace.h"

#include <ostream>
#include <unordered_map>

#include <fmt/format.h>

#include "policy/io/csv.h"
#include "policy/io/limits.h"

namespace duet {

Trace read_trace(const std::string& path) {
  auto f = CsvReader::open(path);
  return read_trace(*f, path);
}

Trace read_trace(std::istream& in, const std::string& name) {
  CsvReader r(in, name);
  CsvHeader h = read_header(r, {"job_id", "submit", "duration", "num_gpus"}, {"gpu_type", "job_type", "user", "vc"});
  const int c_id = h.find("job_id"), c_sub = h.find("submit"), c_dur = h.find("duration"), c_gpu = h.find("num_gpus"),
            c_type = h.find("gpu_type"), c_jt = h.find("job_type"), c_user = h.find("user"), c_vc = h.find("vc");
  Trace t;
  t.source = name;
  std::unordered_map<int64_t, int> seen;
  while (r.next()) {
    r.expect_fields(h.names.size(), h.names.size());
    JobSpec j;
    j.line = r.line();
    j.id = r.integer(c_id, "job_id");
    if (auto [it, fresh] = seen.emplace(j.id, j.line); !fresh)
      r.fail(c_id, fmt::format("duplicate job_id {} (first on line {})", j.id, it->second));
    j.submit = r.seconds(c_sub, "submit");
    j.duration = r.seconds(c_dur, "duration");
    int64_t g = r.positive_integer(c_gpu, "num_gpus");
    if (g > kMaxJobGpus) r.fail(c_gpu, fmt::format("field 'num_gpus': expected at most {}", kMaxJobGpus));
    j.gpus = static_cast<int>(g);
    if (c_type >= 0) {
      j.gpu_type = r.fields()[c_type].text;
      if (!j.gpu_type.empty()) {
        size_t s = 0;
        for (;;) {
          size_t e = j.gpu_type.find('|', s);
          std::string part = j.gpu_type.substr(s, e == std::string::npos ? std::string::npos : e - s);
          if (part.empty() || part.find_first_of(" \t") != std::string::npos)
            r.fail(c_type, "field 'gpu_type': expected a GPU type or types joined by '|', got '" + j.gpu_type + "'");
          if (e == std::string::npos) break;
          s = e + 1;
        }
      }
    }
    if (c_jt >= 0) j.job_type = r.fields()[c_jt].text;
    if (c_user >= 0) j.user = r.fields()[c_user].text;
    if (c_vc >= 0) j.vc = r.fields()[c_vc].text;
    t.jobs.push_back(std::move(j));
  }
  return t;
}

void write_trace(std::ostream& out, const Trace& t) {
  out << "job_id,submit,duration,num_gpus,gpu_type,job_type,user,vc\n";
  for (const JobSpec& j : t.jobs)
    out << fmt::format("{},{},{},{},{},{},{},{}\n", j.id, j.submit, j.duration, j.gpus, csv_escape(j.gpu_type),
                       csv_escape(j.job_type), csv_escape(j.user), csv_escape(j.vc));
}

}  // namespace duet
