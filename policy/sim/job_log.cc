#include "policy/sim/job_log.h"

#include <algorithm>

#include <fmt/format.h>

#include "policy/io/csv.h"

namespace duet {

JobLog::Row& JobLog::row(const JobView& job) {
  auto [it, added] = index_.try_emplace(job.id, rows_.size());
  if (added) {
    Row r;
    r.id = job.id;
    r.gpus = job.gpus;
    r.submit = job.submit_s;
    r.user = job.user;
    r.vc = job.vc;
    r.job_type = job.job_type;
    rows_.push_back(std::move(r));
  }
  return rows_[it->second];
}

void JobLog::on_start(const JobView& job, const Placement& where, double now) {
  Row& r = row(job);
  if (r.first_start < 0) r.first_start = now;
  r.machines.clear();
  r.gpu_types.clear();
  std::vector<int> types;
  for (const PlacementPart& part : where) {
    const Machine& m = cluster_.machines[part.machine];
    r.machines += fmt::format("{}{}:{}", r.machines.empty() ? "" : " ", m.name, part.gpus);
    if (std::find(types.begin(), types.end(), m.type) != types.end()) continue;
    types.push_back(m.type);
    r.gpu_types += (r.gpu_types.empty() ? "" : " ") + cluster_.gpu_types[m.type].name;
  }
}

void JobLog::on_preempt(const JobView& job, double /*now*/) { row(job).preemptions++; }

void JobLog::on_finish(const JobView& job, double now) {
  Row& r = row(job);
  r.finish = now;
  r.run = job.run_s;
  r.queue = now - job.submit_s - job.run_s;
}

void JobLog::write_csv(std::ostream& out) const {
  std::vector<const Row*> sorted;
  for (const Row& r : rows_) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(), [](const Row* a, const Row* b) { return a->id < b->id; });
  out << "job_id,gpus,submit_s,start_s,finish_s,jct_s,queue_s,run_s,preemptions,gpu_types,machines,job_type,user,"
         "vc\n";
  for (const Row* r : sorted) {
    const bool done = r->finish >= 0;
    out << fmt::format("{},{},{:.3f},{:.3f},{},{},{},{:.3f},{},{},{},{},{},{}\n", r->id, r->gpus, r->submit,
                       r->first_start, done ? fmt::format("{:.3f}", r->finish) : "",
                       done ? fmt::format("{:.3f}", r->finish - r->submit) : "",
                       done ? fmt::format("{:.3f}", r->queue) : "", r->run, r->preemptions, csv_escape(r->gpu_types),
                       csv_escape(r->machines), csv_escape(r->job_type), csv_escape(r->user), csv_escape(r->vc));
  }
}

}  // namespace duet
