#include "plugins/select/duet/gres_known.h"

#include "plugins/slurm/slurm_views.h"

namespace duet::plugin {
namespace {

// Whether the node's state for GRES plugin `plugin_id` has the counts its
// slurmd reported since slurmctld started.
bool gres_known(const node_record_t* node, uint32_t plugin_id) {
  if (!node->gres_list) return true;  // no such GRES there: cons_tres rules the node out itself
  bool known = true;
  ListIterator it = list_iterator_create(node->gres_list);
  while (auto* g = static_cast<gres_state_t*>(list_next(it))) {
    if (g->plugin_id != plugin_id || !g->gres_data) continue;
    if (static_cast<const gres_node_state_t*>(g->gres_data)->gres_cnt_found == NO_VAL64) known = false;
  }
  list_iterator_destroy(it);
  return known;
}

bool job_gres_known(const job_record_t* job, const node_record_t* node) {
  bool known = true;
  ListIterator it = list_iterator_create(job->gres_list_req);
  while (auto* g = static_cast<gres_state_t*>(list_next(it)))
    if (!gres_known(node, g->plugin_id)) known = false;
  list_iterator_destroy(it);
  return known;
}

}  // namespace

bitstr_t* nodes_with_known_gres(const job_record_t* job, const bitstr_t* nodes) {
  if (!job || !nodes || !job->gres_list_req || list_is_empty(job->gres_list_req)) return nullptr;
  bitstr_t* kept = nullptr;
  node_record_t* node;
  for (int i = 0; (node = next_node(&i)); i++) {
    if (!bit_test(const_cast<bitstr_t*>(nodes), node->index)) continue;
    // A powered-down node registers only once a job has been given it: never
    // keep jobs from it (they would wait for ever).
    if (IS_NODE_POWERED_DOWN(node) || IS_NODE_POWERING_UP(node) || job_gres_known(job, node)) continue;
    if (!kept) kept = bit_copy(const_cast<bitstr_t*>(nodes));
    bit_clear(kept, node->index);
  }
  return kept;
}

}  // namespace duet::plugin
