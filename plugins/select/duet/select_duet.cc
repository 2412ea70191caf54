// select/duet: select/cons_tres steered by duet's placement agent.
//
// Every select_p_* call is forwarded to select/cons_tres (the pattern of
// select/other and select/cray_aries), so cores, memory, GRES and backfill
// work exactly as there. Three calls do more (steering.cc):
//   job_test   node order biased by the agent's ranking (sched_weight), and
//              no GRES job on a node before slurmctld knows its GRES
//              (gres_known.h)
//   job_begin  the job's explanation (SystemComment)
//   job_fini   the finished job goes to the agent's observer (online learning)
// and state_save / state_restore carry the observer's state.
// Every select plugin in PluginDir is loaded by clients too (srun, sinfo):
// init stays quiet and only slurmctld reads duet.conf.
#include <pthread.h>

#include "plugins/slurm/slurm_internal.h"
#include "plugins/select/duet/gres_known.h"
#include "plugins/select/duet/placement_model.h"
#include "plugins/select/duet/steering.h"

extern "C" {
extern const char plugin_name[];
extern const char plugin_type[];
extern const uint32_t plugin_id;
extern const uint32_t plugin_version;
const char plugin_name[] = "Select duet (learned placement over cons_tres) plugin";
const char plugin_type[] = "select/duet";
const uint32_t plugin_id = 1109;  // 109 is cons_tres; ids must be unique
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

int init(void);
int fini(void);
int select_p_state_save(char* dir_name);
int select_p_state_restore(char* dir_name);
int select_p_job_init(List job_list);
int select_p_node_init(void);
int select_p_job_test(job_record_t* job_ptr, bitstr_t* bitmap, uint32_t min_nodes, uint32_t max_nodes,
                      uint32_t req_nodes, uint16_t mode, List preemptee_candidates, List* preemptee_job_list,
                      bitstr_t* exc_core_bitmap);
int select_p_job_begin(job_record_t* job_ptr);
int select_p_job_ready(job_record_t* job_ptr);
int select_p_job_expand(job_record_t* from_job_ptr, job_record_t* to_job_ptr);
int select_p_job_resized(job_record_t* job_ptr, node_record_t* node_ptr);
int select_p_job_signal(job_record_t* job_ptr, int signal);
int select_p_job_fini(job_record_t* job_ptr);
int select_p_job_suspend(job_record_t* job_ptr, bool indf_susp);
int select_p_job_resume(job_record_t* job_ptr, bool indf_susp);
bitstr_t* select_p_step_pick_nodes(job_record_t* job_ptr, select_jobinfo_t* jobinfo, uint32_t node_count,
                                   bitstr_t** avail_nodes);
int select_p_step_start(step_record_t* step_ptr);
int select_p_step_finish(step_record_t* step_ptr, bool killing_step);
int select_p_select_nodeinfo_pack(select_nodeinfo_t* nodeinfo, buf_t* buffer, uint16_t protocol_version);
int select_p_select_nodeinfo_unpack(select_nodeinfo_t** nodeinfo, buf_t* buffer, uint16_t protocol_version);
select_nodeinfo_t* select_p_select_nodeinfo_alloc(void);
int select_p_select_nodeinfo_free(select_nodeinfo_t* nodeinfo);
int select_p_select_nodeinfo_set_all(void);
int select_p_select_nodeinfo_set(job_record_t* job_ptr);
int select_p_select_nodeinfo_get(select_nodeinfo_t* nodeinfo, enum select_nodedata_type dinfo, enum node_states state,
                                 void* data);
select_jobinfo_t* select_p_select_jobinfo_alloc(void);
int select_p_select_jobinfo_free(select_jobinfo_t* jobinfo);
int select_p_select_jobinfo_set(select_jobinfo_t* jobinfo, enum select_jobdata_type data_type, void* data);
int select_p_select_jobinfo_get(select_jobinfo_t* jobinfo, enum select_jobdata_type data_type, void* data);
select_jobinfo_t* select_p_select_jobinfo_copy(select_jobinfo_t* jobinfo);
int select_p_select_jobinfo_pack(select_jobinfo_t* jobinfo, buf_t* buffer, uint16_t protocol_version);
int select_p_select_jobinfo_unpack(select_jobinfo_t** jobinfo_pptr, buf_t* buffer, uint16_t protocol_version);
char* select_p_select_jobinfo_sprint(select_jobinfo_t* jobinfo, char* buf, size_t size, int mode);
char* select_p_select_jobinfo_xstrdup(select_jobinfo_t* jobinfo, int mode);
int select_p_get_info_from_plugin(enum select_plugindata_info dinfo, job_record_t* job_ptr, void* data);
int select_p_update_node_config(int index);
int select_p_reconfigure(void);
bitstr_t* select_p_resv_test(resv_desc_msg_t* resv_desc_ptr, uint32_t node_cnt, bitstr_t* avail_bitmap,
                             bitstr_t** core_bitmap);
}

namespace {

// Our copy of src/common/select.c's node_select_syms, in slurm_select_ops_t order.
const char* cons_tres_syms[] = {
    "plugin_id",
    "select_p_state_save",
    "select_p_state_restore",
    "select_p_job_init",
    "select_p_node_init",
    "select_p_job_test",
    "select_p_job_begin",
    "select_p_job_ready",
    "select_p_job_expand",
    "select_p_job_resized",
    "select_p_job_signal",
    "select_p_job_fini",
    "select_p_job_suspend",
    "select_p_job_resume",
    "select_p_step_pick_nodes",
    "select_p_step_start",
    "select_p_step_finish",
    "select_p_select_nodeinfo_pack",
    "select_p_select_nodeinfo_unpack",
    "select_p_select_nodeinfo_alloc",
    "select_p_select_nodeinfo_free",
    "select_p_select_nodeinfo_set_all",
    "select_p_select_nodeinfo_set",
    "select_p_select_nodeinfo_get",
    "select_p_select_jobinfo_alloc",
    "select_p_select_jobinfo_free",
    "select_p_select_jobinfo_set",
    "select_p_select_jobinfo_get",
    "select_p_select_jobinfo_copy",
    "select_p_select_jobinfo_pack",
    "select_p_select_jobinfo_unpack",
    "select_p_select_jobinfo_sprint",
    "select_p_select_jobinfo_xstrdup",
    "select_p_get_info_from_plugin",
    "select_p_update_node_config",
    "select_p_reconfigure",
    "select_p_resv_test",
};
static_assert(sizeof(cons_tres_syms) == sizeof(slurm_select_ops_t),
              "cons_tres_syms must list every member of slurm_select_ops_t");

slurm_select_ops_t ops;
plugin_context_t* g_context = nullptr;
pthread_mutex_t g_context_lock = PTHREAD_MUTEX_INITIALIZER;

}  // namespace

extern "C" int init(void) {
  int rc = SLURM_SUCCESS;
  slurm_mutex_lock(&g_context_lock);
  if (!g_context) {
    g_context = plugin_context_create(const_cast<char*>("select"), const_cast<char*>("select/cons_tres"),
                                      reinterpret_cast<void**>(&ops), cons_tres_syms, sizeof(cons_tres_syms));
    if (!g_context) {
      error("%s: cannot load select/cons_tres", plugin_type);
      rc = SLURM_ERROR;
    }
  }
  slurm_mutex_unlock(&g_context_lock);
  if (rc == SLURM_SUCCESS && running_in_slurmctld()) {
    duet::plugin::register_placement_agent();  // Ranker=model (placement_model.h)
    duet::plugin::steering_init();
  }
  debug("%s loaded", plugin_name);
  return rc;
}

extern "C" int fini(void) {
  if (running_in_slurmctld()) duet::plugin::steering_fini();
  int rc = SLURM_SUCCESS;
  slurm_mutex_lock(&g_context_lock);
  if (g_context) {
    rc = plugin_context_destroy(g_context);
    g_context = nullptr;
  }
  slurm_mutex_unlock(&g_context_lock);
  return rc;
}

extern "C" int select_p_state_save(char* dir_name) {
  int rc = (*(ops.state_save))(dir_name);
  duet::plugin::steering_state_save(dir_name);
  return rc;
}

extern "C" int select_p_state_restore(char* dir_name) {
  int rc = (*(ops.state_restore))(dir_name);
  duet::plugin::steering_state_restore(dir_name);
  return rc;
}

extern "C" int select_p_job_init(List job_list) { return (*(ops.job_init))(job_list); }

extern "C" int select_p_node_init(void) { return (*(ops.node_init))(); }

namespace {

// The placement agent's consolidation (NodeRanker::one_node): cons_tres is
// asked for one node. If none has the job's resources free now, the job
// waits for one, unless no single node of `nodes` could hold it even when
// idle (its CPUs or memory): then, if `bias` left slow nodes out (the speed
// floor), the floor is dropped and the test run again; else the job is
// placed as cons_tres would place it.
int one_node_test(duet::plugin::NodeBias& bias, job_record_t* job_ptr, bitstr_t* nodes, uint32_t min_nodes,
                  uint32_t max_nodes, uint32_t req_nodes, uint16_t mode, List preemptee_candidates,
                  List* preemptee_job_list, bitstr_t* exc_core_bitmap) {
  bitstr_t* one = bit_copy(nodes);
  int rc =
      (*(ops.job_test))(job_ptr, one, min_nodes, 1, 1, mode, preemptee_candidates, preemptee_job_list, exc_core_bitmap);
  if (rc == SLURM_SUCCESS) {
    bit_copybits(nodes, one);  // the node selected
    FREE_NULL_BITMAP(one);
    return rc;
  }
  bit_copybits(one, nodes);
  const int ever =
      (*(ops.job_test))(job_ptr, one, min_nodes, 1, 1, SELECT_MODE_TEST_ONLY, nullptr, nullptr, exc_core_bitmap);
  FREE_NULL_BITMAP(one);
  if (ever == SLURM_SUCCESS) {
    debug("%s: %pJ waits for one node to hold it", plugin_type, job_ptr);
    return rc;
  }
  if (bias.kept_off()) {  // once: drop_floor leaves none kept off
    debug("%s: %pJ: no node above its speed floor could ever hold it; floor dropped", plugin_type, job_ptr);
    bias.drop_floor(nodes);
    return one_node_test(bias, job_ptr, nodes, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
                         preemptee_job_list, exc_core_bitmap);
  }
  return (*(ops.job_test))(job_ptr, nodes, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
                           preemptee_job_list, exc_core_bitmap);
}

// The placement agent's speed floor (NodeRanker::keep_off): `bias` left the
// slow nodes out of `nodes`. If the job does not fit the rest now, it waits
// for them, unless they could never hold it even when idle (too few for its
// node count, their CPUs or memory): then the floor is dropped.
int floor_test(duet::plugin::NodeBias& bias, job_record_t* job_ptr, bitstr_t* nodes, uint32_t min_nodes,
               uint32_t max_nodes, uint32_t req_nodes, uint16_t mode, List preemptee_candidates,
               List* preemptee_job_list, bitstr_t* exc_core_bitmap) {
  bitstr_t* fast = bias.kept_off() ? bit_copy(nodes) : nullptr;
  int rc = (*(ops.job_test))(job_ptr, nodes, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
                             preemptee_job_list, exc_core_bitmap);
  if (rc == SLURM_SUCCESS || !fast) {
    FREE_NULL_BITMAP(fast);
    return rc;
  }
  const int ever = (*(ops.job_test))(job_ptr, fast, min_nodes, max_nodes, req_nodes, SELECT_MODE_TEST_ONLY, nullptr,
                                     nullptr, exc_core_bitmap);
  FREE_NULL_BITMAP(fast);
  if (ever == SLURM_SUCCESS) {
    debug("%s: %pJ waits for the nodes above its speed floor", plugin_type, job_ptr);
    return rc;
  }
  debug("%s: %pJ: the nodes above its speed floor could never hold it; floor dropped", plugin_type, job_ptr);
  bias.drop_floor(nodes);
  return (*(ops.job_test))(job_ptr, nodes, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
                           preemptee_job_list, exc_core_bitmap);
}

}  // namespace

extern "C" int select_p_job_test(job_record_t* job_ptr, bitstr_t* bitmap, uint32_t min_nodes, uint32_t max_nodes,
                                 uint32_t req_nodes, uint16_t mode, List preemptee_candidates, List* preemptee_job_list,
                                 bitstr_t* exc_core_bitmap) {
  // A job that may start now keeps off nodes whose GRES slurmctld does not
  // know yet (gres_known.h); it starts once they registered.
  bitstr_t* known = SELECT_IS_MODE_RUN_NOW(mode) ? duet::plugin::nodes_with_known_gres(job_ptr, bitmap) : nullptr;
  if (known) debug("%s: %pJ: nodes whose GRES is not known yet (slurmd not registered) left out", plugin_type, job_ptr);
  bitstr_t* nodes = known ? known : bitmap;
  int rc;
  {
    duet::plugin::NodeBias bias(job_ptr, nodes, mode);  // restores node weights on scope exit
    if (bias.one_node() && min_nodes <= 1 && max_nodes >= 1)
      rc = one_node_test(bias, job_ptr, nodes, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
                         preemptee_job_list, exc_core_bitmap);
    else
      rc = floor_test(bias, job_ptr, nodes, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
                      preemptee_job_list, exc_core_bitmap);
    bias.done(rc == SLURM_SUCCESS);
  }
  if (known) {
    if (rc == SLURM_SUCCESS) bit_copybits(bitmap, known);  // the nodes selected
    FREE_NULL_BITMAP(known);
  }
  return rc;
}

extern "C" int select_p_job_begin(job_record_t* job_ptr) {
  int rc = (*(ops.job_begin))(job_ptr);
  if (rc == SLURM_SUCCESS) duet::plugin::steering_job_begin(job_ptr);
  return rc;
}

extern "C" int select_p_job_ready(job_record_t* job_ptr) { return (*(ops.job_ready))(job_ptr); }

extern "C" int select_p_job_expand(job_record_t* from_job_ptr, job_record_t* to_job_ptr) {
  return (*(ops.job_expand))(from_job_ptr, to_job_ptr);
}

extern "C" int select_p_job_resized(job_record_t* job_ptr, node_record_t* node_ptr) {
  return (*(ops.job_resized))(job_ptr, node_ptr);
}

extern "C" int select_p_job_signal(job_record_t* job_ptr, int signal) { return (*(ops.job_signal))(job_ptr, signal); }

extern "C" int select_p_job_fini(job_record_t* job_ptr) {
  duet::plugin::steering_job_fini(job_ptr);  // before cons_tres frees the allocation
  return (*(ops.job_fini))(job_ptr);
}

extern "C" int select_p_job_suspend(job_record_t* job_ptr, bool indf_susp) {
  return (*(ops.job_suspend))(job_ptr, indf_susp);
}

extern "C" int select_p_job_resume(job_record_t* job_ptr, bool indf_susp) {
  return (*(ops.job_resume))(job_ptr, indf_susp);
}

extern "C" bitstr_t* select_p_step_pick_nodes(job_record_t* job_ptr, select_jobinfo_t* jobinfo, uint32_t node_count,
                                              bitstr_t** avail_nodes) {
  return (*(ops.step_pick_nodes))(job_ptr, jobinfo, node_count, avail_nodes);
}

extern "C" int select_p_step_start(step_record_t* step_ptr) { return (*(ops.step_start))(step_ptr); }

extern "C" int select_p_step_finish(step_record_t* step_ptr, bool killing_step) {
  return (*(ops.step_finish))(step_ptr, killing_step);
}

extern "C" int select_p_select_nodeinfo_pack(select_nodeinfo_t* nodeinfo, buf_t* buffer, uint16_t protocol_version) {
  return (*(ops.nodeinfo_pack))(nodeinfo, buffer, protocol_version);
}

extern "C" int select_p_select_nodeinfo_unpack(select_nodeinfo_t** nodeinfo, buf_t* buffer, uint16_t protocol_version) {
  return (*(ops.nodeinfo_unpack))(nodeinfo, buffer, protocol_version);
}

extern "C" select_nodeinfo_t* select_p_select_nodeinfo_alloc(void) { return (*(ops.nodeinfo_alloc))(); }

extern "C" int select_p_select_nodeinfo_free(select_nodeinfo_t* nodeinfo) { return (*(ops.nodeinfo_free))(nodeinfo); }

extern "C" int select_p_select_nodeinfo_set_all(void) { return (*(ops.nodeinfo_set_all))(); }

extern "C" int select_p_select_nodeinfo_set(job_record_t* job_ptr) { return (*(ops.nodeinfo_set))(job_ptr); }

extern "C" int select_p_select_nodeinfo_get(select_nodeinfo_t* nodeinfo, enum select_nodedata_type dinfo,
                                            enum node_states state, void* data) {
  return (*(ops.nodeinfo_get))(nodeinfo, dinfo, state, data);
}

extern "C" select_jobinfo_t* select_p_select_jobinfo_alloc(void) { return (*(ops.jobinfo_alloc))(); }

extern "C" int select_p_select_jobinfo_free(select_jobinfo_t* jobinfo) { return (*(ops.jobinfo_free))(jobinfo); }

extern "C" int select_p_select_jobinfo_set(select_jobinfo_t* jobinfo, enum select_jobdata_type data_type, void* data) {
  return (*(ops.jobinfo_set))(jobinfo, data_type, data);
}

extern "C" int select_p_select_jobinfo_get(select_jobinfo_t* jobinfo, enum select_jobdata_type data_type, void* data) {
  return (*(ops.jobinfo_get))(jobinfo, data_type, data);
}

extern "C" select_jobinfo_t* select_p_select_jobinfo_copy(select_jobinfo_t* jobinfo) {
  return (*(ops.jobinfo_copy))(jobinfo);
}

extern "C" int select_p_select_jobinfo_pack(select_jobinfo_t* jobinfo, buf_t* buffer, uint16_t protocol_version) {
  return (*(ops.jobinfo_pack))(jobinfo, buffer, protocol_version);
}

extern "C" int select_p_select_jobinfo_unpack(select_jobinfo_t** jobinfo_pptr, buf_t* buffer,
                                              uint16_t protocol_version) {
  return (*(ops.jobinfo_unpack))(jobinfo_pptr, buffer, protocol_version);
}

extern "C" char* select_p_select_jobinfo_sprint(select_jobinfo_t* jobinfo, char* buf, size_t size, int mode) {
  return (*(ops.jobinfo_sprint))(jobinfo, buf, size, mode);
}

extern "C" char* select_p_select_jobinfo_xstrdup(select_jobinfo_t* jobinfo, int mode) {
  return (*(ops.jobinfo_xstrdup))(jobinfo, mode);
}

extern "C" int select_p_get_info_from_plugin(enum select_plugindata_info dinfo, job_record_t* job_ptr, void* data) {
  return (*(ops.get_info_from_plugin))(dinfo, job_ptr, data);
}

extern "C" int select_p_update_node_config(int index) { return (*(ops.update_node_config))(index); }

extern "C" int select_p_reconfigure(void) {
  int rc = (*(ops.reconfigure))();
  if (running_in_slurmctld()) duet::plugin::steering_reconfigure();
  return rc;
}

extern "C" bitstr_t* select_p_resv_test(resv_desc_msg_t* resv_desc_ptr, uint32_t node_cnt, bitstr_t* avail_bitmap,
                                        bitstr_t** core_bitmap) {
  return (*(ops.resv_test))(resv_desc_ptr, node_cnt, avail_bitmap, core_bitmap);
}
