#include "plugins/slurm/job_fit.h"

#include <cctype>
#include <cstring>

#include "plugins/seam/explain.h"
#include "plugins/slurm/slurm_views.h"

namespace duet::plugin {
namespace {

bool is_gpu(const gres_state_t* g) { return g->gres_name && !strcmp(g->gres_name, "gpu"); }

// GPUs of `type` on the node and free now, from its device bitmaps: each
// device's type (its gres.conf line) and whether a job holds it, which is
// what cons_tres allocates by. Slurm 22.05's per-type count (type_cnt_alloc)
// can be off after a slurmctld restart (site_factor_duet(8), NOTES). False
// when the node has no device bitmaps (no File= in gres.conf, or not
// registered yet): the counts are all there is then.
bool typed_from_devices(gres_node_state_t* ns, const std::string& type, uint64_t* total, uint64_t* free) {
  if (!ns->topo_cnt || !ns->topo_gres_bitmap || !ns->topo_type_name || !ns->gres_bit_alloc) return false;
  const int64_t size = bit_size(ns->gres_bit_alloc);
  for (uint16_t i = 0; i < ns->topo_cnt; ++i)
    if (!ns->topo_gres_bitmap[i] || bit_size(ns->topo_gres_bitmap[i]) != size) return false;
  for (uint16_t i = 0; i < ns->topo_cnt; ++i) {
    if (!ns->topo_type_name[i] || strcasecmp(ns->topo_type_name[i], type.c_str())) continue;
    const int64_t devices = bit_set_count(ns->topo_gres_bitmap[i]);
    const int64_t held = bit_overlap(ns->topo_gres_bitmap[i], ns->gres_bit_alloc);
    *total += static_cast<uint64_t>(devices);
    *free += devices > held ? static_cast<uint64_t>(devices - held) : 0;
  }
  return true;
}

// GPUs of `type` ("" = any) configured on the node and free now.
void node_gpus(const node_record_t* node, const std::string& type, uint64_t* total, uint64_t* free) {
  *total = *free = 0;
  if (!node->gres_list) return;
  ListIterator it = list_iterator_create(node->gres_list);
  while (auto* g = static_cast<gres_state_t*>(list_next(it))) {
    if (!is_gpu(g) || !g->gres_data) continue;
    auto* ns = static_cast<gres_node_state_t*>(g->gres_data);
    if (type.empty()) {
      *total += ns->gres_cnt_avail;
      *free += ns->gres_cnt_avail > ns->gres_cnt_alloc ? ns->gres_cnt_avail - ns->gres_cnt_alloc : 0;
      continue;
    }
    if (typed_from_devices(ns, type, total, free)) continue;
    for (uint16_t t = 0; t < ns->type_cnt; ++t) {
      if (!ns->type_name || !ns->type_name[t] || strcasecmp(ns->type_name[t], type.c_str())) continue;
      uint64_t avail = ns->type_cnt_avail ? ns->type_cnt_avail[t] : 0;
      uint64_t alloc = ns->type_cnt_alloc ? ns->type_cnt_alloc[t] : 0;
      *total += avail;
      *free += avail > alloc ? avail - alloc : 0;
    }
  }
  list_iterator_destroy(it);
}

// A constraint that is one plain feature name ("p100"); an expression
// (&, |, [], counts) is left to slurmctld.
bool simple_feature(const char* f) {
  if (!f || !*f) return false;
  for (const char* p = f; *p; ++p)
    if (!isalnum(static_cast<unsigned char>(*p)) && *p != '_' && *p != '-' && *p != '.') return false;
  return true;
}

bool has_feature(const node_record_t* node, const char* want) {
  const char* list = node->config_ptr ? node->config_ptr->feature : nullptr;
  if (!list) return false;
  size_t n = strlen(want);
  for (const char* p = list; *p;) {
    const char* end = strchr(p, ',');
    size_t len = end ? static_cast<size_t>(end - p) : strlen(p);
    if (len == n && !strncasecmp(p, want, n)) return true;
    if (!end) break;
    p = end + 1;
  }
  return false;
}

}  // namespace

std::vector<NodeFit> job_node_fit(const job_record_t* job, bitstr_t* offered) {
  std::vector<NodeFit> out;
  uint32_t gpus = 0;
  std::string type;
  job_gpu_request(job, &gpus, &type);
  uint32_t nodes_wanted = (job->details && job->details->min_nodes) ? job->details->min_nodes : 1;
  uint64_t per_node = (gpus + nodes_wanted - 1) / nodes_wanted;
  bitstr_t* part = job->part_ptr ? job->part_ptr->node_bitmap : nullptr;
  bitstr_t* excluded = job->details ? job->details->exc_node_bitmap : nullptr;
  const char* feature = job->details ? job->details->features : nullptr;
  bool check_feature = simple_feature(feature);

  node_record_t* node;
  for (int i = 0; (node = next_node(&i)); i++) {
    NodeFit f;
    uint64_t total = 0, free = 0;
    node_gpus(node, type, &total, &free);
    f.may_use = (!part || bit_test(part, node->index)) && (!excluded || !bit_test(excluded, node->index)) &&
                (gpus == 0 || total > 0) && (!check_feature || has_feature(node, feature));
    if (IS_NODE_DOWN(node) || IS_NODE_FAIL(node) || IS_NODE_NO_RESPOND(node) || IS_NODE_FUTURE(node))
      f.busy = "down";
    else if (IS_NODE_DRAIN(node))
      f.busy = "drained";
    else if (gpus > 0 && free < per_node)
      f.busy = explain_gpus_short(per_node, free, type);
    else if (offered && !bit_test(offered, node->index))
      f.busy = "not offered by slurmctld (reserved, or held by an exclusive job)";
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace duet::plugin
