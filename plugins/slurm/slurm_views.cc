// slurmctld records -> JobInfo / NodeInfo.
#include "plugins/slurm/slurm_views.h"

#include "plugins/slurm/slurm_internal.h"

namespace duet::plugin {
namespace {

const char* str(const char* s) { return s ? s : ""; }

bool is_gpu(const gres_state_t* g) { return g->gres_name && !strcmp(g->gres_name, "gpu"); }

}  // namespace

bool job_gpu_request(const job_record_t* job, uint32_t* gpus, std::string* type) {
  *gpus = 0;
  type->clear();
  if (!job || !job->gres_list_req) return false;
  bool any = false;
  uint32_t nodes = (job->details && job->details->min_nodes) ? job->details->min_nodes : 1;
  uint32_t tasks = (job->details && job->details->num_tasks) ? job->details->num_tasks : 1;
  ListIterator it = list_iterator_create(job->gres_list_req);
  while (auto* g = static_cast<gres_state_t*>(list_next(it))) {
    if (!is_gpu(g) || !g->gres_data) continue;
    auto* js = static_cast<gres_job_state_t*>(g->gres_data);
    uint64_t n = 0;
    if (js->gres_per_job)
      n = js->gres_per_job;
    else if (js->gres_per_node)
      n = js->gres_per_node * nodes;
    else if (js->gres_per_task)
      n = js->gres_per_task * tasks;
    else if (js->gres_per_socket)
      n = js->gres_per_socket * nodes;
    else
      n = js->total_gres;
    *gpus += static_cast<uint32_t>(n);
    if (js->type_name && type->empty()) *type = js->type_name;
    any = true;
  }
  list_iterator_destroy(it);
  return any && *gpus > 0;
}

JobInfo job_info(const job_record_t* job, int64_t now) {
  JobInfo j;
  j.job_id = job->job_id;
  j.user_id = job->user_id;
  j.name = str(job->name);
  j.partition = str(job->partition);
  j.account = str(job->account);
  j.comment = str(job->comment);
  if (job->details) {
    j.submit_time = job->details->submit_time;
    j.begin_time = job->details->begin_time;
    time_t since =
        job->details->begin_time > job->details->submit_time ? job->details->begin_time : job->details->submit_time;
    j.wait_s = now > since ? static_cast<double>(now - since) : 0.0;
    j.min_nodes = job->details->min_nodes ? job->details->min_nodes : 1;
    j.cpus = job->details->min_cpus ? job->details->min_cpus : 1;
  }
  if (job->time_limit != NO_VAL && job->time_limit != INFINITE) j.time_limit_s = 60.0 * job->time_limit;
  job_gpu_request(job, &j.gpus, &j.gpu_type);
  return j;
}

JobInfo running_job_info(const job_record_t* job, int64_t now) {
  JobInfo j = job_info(job, now);
  j.running = true;
  const time_t start = job->start_time;
  if (start > 0 && job->details) {
    time_t since =
        job->details->begin_time > job->details->submit_time ? job->details->begin_time : job->details->submit_time;
    j.wait_s = start > since ? static_cast<double>(start - since) : 0.0;
  }
  j.run_s = start > 0 && now > start ? static_cast<double>(now - start) : 0.0;
  j.attained_gpu_s = j.run_s * j.gpus;
  return j;
}

ClusterInfo cluster_info(int64_t now) {
  ClusterInfo c;
  c.now = now;
  node_record_t* node;
  for (int i = 0; (node = next_node(&i)); i++) {
    NodeInfo n;
    n.name = str(node->name);
    n.cpus_total = node->cpus;
    n.jobs_running = node->run_job_cnt;
    n.usable = !IS_NODE_DOWN(node) && !IS_NODE_DRAIN(node) && !IS_NODE_FAIL(node) && !IS_NODE_NO_RESPOND(node) &&
               !IS_NODE_FUTURE(node);
    if (node->gres_list) {
      ListIterator it = list_iterator_create(node->gres_list);
      while (auto* g = static_cast<gres_state_t*>(list_next(it))) {
        if (!is_gpu(g) || !g->gres_data) continue;
        auto* ns = static_cast<gres_node_state_t*>(g->gres_data);
        n.gpus_total += static_cast<uint32_t>(ns->gres_cnt_avail);
        n.gpus_alloc += static_cast<uint32_t>(ns->gres_cnt_alloc);
        if (n.gpu_type.empty() && ns->type_cnt && ns->type_name && ns->type_name[0]) n.gpu_type = ns->type_name[0];
      }
      list_iterator_destroy(it);
    }
    c.nodes.push_back(std::move(n));
  }
  return c;
}

std::vector<std::string> job_node_names(const job_record_t* job) {
  std::vector<std::string> out;
  if (!job->node_bitmap) return out;
  node_record_t* node;
  for (int i = 0; (node = next_node(&i)); i++)
    if (bit_test(job->node_bitmap, node->index)) out.push_back(str(node->name));
  return out;
}

}  // namespace duet::plugin
