#include "plugins/spank/vmha/submit.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace vmha_spank {

namespace {

// srun, sbatch and salloc export their option struct `opt` and libslurmfull
// exports slurm_option_get(opt, name), which formats any option the way the
// command parsed it ("2" or "2-4" for --nodes), whatever the struct layout.
using OptionGet = char* (*)(void* opt, const char* name);
using XFree = void (*)(void** p);

// The command's option NAME as it parsed it; false when it has none (or
// this is not srun/sbatch/salloc).
bool option_text(const char* name, std::string* value) {
  void* opt = dlsym(RTLD_DEFAULT, "opt");
  auto get = reinterpret_cast<OptionGet>(dlsym(RTLD_DEFAULT, "slurm_option_get"));
  auto xfree = reinterpret_cast<XFree>(dlsym(RTLD_DEFAULT, "slurm_xfree"));
  if (!opt || !get) return false;
  char* v = get(opt, name);
  if (!v) return false;
  *value = v;
  if (xfree) xfree(reinterpret_cast<void**>(&v));
  return true;
}

unsigned nodes_from_option_table() {
  std::string v;
  return option_text("nodes", &v) ? static_cast<unsigned>(std::strtoul(v.c_str(), nullptr, 10)) : 0;
}

// A --gres list's items as the user wrote them: Slurm 22.05 stores
// --gres=gpu:1 as "gres:gpu:1"; "gres/gpu" is also accepted.
std::vector<std::string> gres_items(const std::string& list) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(start, comma - start);
    if (item.rfind("gres/", 0) == 0 || item.rfind("gres:", 0) == 0) item = item.substr(5);
    items.push_back(item);
    start = comma + 1;
  }
  return items;
}

// An item names a GPU: gpu[:type][:count], not gpu:0.
bool gres_has_gpu(const std::vector<std::string>& items) {
  for (const std::string& item : items) {
    const size_t last = item.rfind(':');
    const bool none = last != std::string::npos && item.substr(last + 1) == "0";
    if ((item == "gpu" || item.rfind("gpu:", 0) == 0) && !none) return true;
  }
  return false;
}

}  // namespace

std::string requested_gpus() {
  std::string v;
  if (option_text("gres", &v)) {
    const std::vector<std::string> items = gres_items(v);
    if (gres_has_gpu(items)) {
      std::string written;
      for (const std::string& item : items) written += (written.empty() ? "" : ",") + item;
      return "--gres=" + written;
    }
  }
  for (const char* name : {"gpus", "gpus-per-node", "gpus-per-task", "gpus-per-socket"})
    if (option_text(name, &v) && !v.empty() && v != "0") return std::string("--") + name + "=" + v;
  // srun in an allocation that holds GPUs: its steps get them.
  for (const char* env : {"SLURM_JOB_GPUS", "SLURM_GPUS", "SLURM_GPUS_PER_NODE", "SLURM_GPUS_PER_TASK"})
    if (const char* e = std::getenv(env); e && *e) return std::string(env) + "=" + e;
  return "";
}

unsigned requested_min_nodes() {
  unsigned n = nodes_from_option_table();
  // srun inside an allocation: its backups may go to any node of the job.
  if (const char* alloc = std::getenv("SLURM_JOB_NUM_NODES")) {
    unsigned a = static_cast<unsigned>(std::strtoul(alloc, nullptr, 10));
    if (a > n) n = a;
  }
  return n;
}

int check_and_export(const HaRequest& req, const char* command) {
  if (!req.on) return 0;
  unsigned nodes = requested_min_nodes();
  if (nodes != 0 && nodes < 2) {
    slurm_error(
        "vmha: %s --ha: a protected job needs a second node for the backups of its tasks, "
        "but this job asks for %u node (add -N 2 or more; no backup partition is configured)",
        command, nodes);
    return -1;
  }
  if (const std::string gpus = requested_gpus(); !gpus.empty()) {
    slurm_error(
        "vmha: %s --ha: this job asks for GPUs (%s), but a protected job's GPU memory and state are not "
        "replicated, so a backup could not resume it; run it without --ha, or without GPUs",
        command, gpus.c_str());
    return -1;
  }
  // No check of the batch script here: sbatch --ha runs it in vmha unless it
  // starts srun steps, which slurmstepd decides (stepd.cc, vmha_spank(8)).
  // The job's steps (srun inside sbatch/salloc) read SLURM_HA.
  std::string value = req.epoch_ms ? std::to_string(req.epoch_ms) : "yes";
  if (setenv(kEnvHa, value.c_str(), 1) != 0) {
    slurm_error("vmha: cannot set %s", kEnvHa);
    return -1;
  }
  return 0;
}

}  // namespace vmha_spank
