#include "replay/jobs_file.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "policy/io/csv.h"

namespace duet::replay {

void write_jobs_header(std::ostream& out, const std::map<std::string, std::string>& meta) {
  out << "# duet replay:";
  for (const auto& [k, v] : meta) out << ' ' << k << '=' << v;
  out << "\njob_id,trace_job,submit_s,work_s,num_gpus,gpu_type,job_type\n";
}

void write_job_row(std::ostream& out, const ReplayedJob& j) {
  out << fmt::format("{},{},{},{},{},{},{}\n", j.job_id, j.trace_job, j.submit_s, j.work_s, j.gpus,
                     csv_escape(j.gpu_type), csv_escape(j.job_type));
}

JobsFile read_jobs_file(const std::string& path) {
  auto f = CsvReader::open(path);
  JobsFile jf;
  // Comments go; their key=value words become metadata. Blank lines keep the
  // numbering so CSV errors name the file's own lines.
  std::stringstream body;
  std::string line;
  while (std::getline(*f, line)) {
    if (!line.empty() && line[0] == '#') {
      std::istringstream w(line.substr(1));
      std::string word;
      while (w >> word)
        if (size_t eq = word.find('='); eq != std::string::npos && eq > 0)
          jf.meta[word.substr(0, eq)] = word.substr(eq + 1);
      body << "\n";
    } else {
      body << line << "\n";
    }
  }
  CsvReader r(body, path);
  CsvHeader h = read_header(r, {"job_id"}, {"trace_job", "submit_s", "work_s", "num_gpus", "gpu_type", "job_type"});
  const int ci = h.find("job_id"), ct = h.find("trace_job"), cs = h.find("submit_s"), cw = h.find("work_s"),
            cg = h.find("num_gpus"), cy = h.find("gpu_type"), cj = h.find("job_type");
  while (r.next()) {
    r.expect_fields(h.names.size(), h.names.size());
    ReplayedJob j;
    j.job_id = r.text(ci, "job_id");
    if (j.job_id.empty() || j.job_id.find_first_not_of("0123456789_+") != std::string::npos)
      r.fail(ci, "field 'job_id': expected a Slurm job id");
    if (ct >= 0) j.trace_job = r.integer(ct, "trace_job");
    if (cs >= 0) j.submit_s = r.non_negative(cs, "submit_s");
    if (cw >= 0) j.work_s = r.non_negative(cw, "work_s");
    if (cg >= 0) j.gpus = static_cast<int>(r.positive_integer(cg, "num_gpus"));
    if (cy >= 0) j.gpu_type = r.fields()[cy].text;
    if (cj >= 0) j.job_type = r.fields()[cj].text;
    jf.jobs.push_back(std::move(j));
  }
  return jf;
}

}  // namespace duet::replay
