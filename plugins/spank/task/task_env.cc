#include "plugins/spank/task/task_env.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "plugins/spank/lib/batch_step.h"
#include "plugins/spank/lib/hostlist.h"

extern char** environ;

namespace vmha_task {

namespace {

bool need(const char* name, std::string* out, std::string* error) {
  const char* v = std::getenv(name);
  if (!v || !*v) {
    *error = std::string(name) + " is not set (vmha-task runs as a task of an --ha job step)";
    return false;
  }
  *out = v;
  return true;
}

bool executable(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
}

}  // namespace

bool resolve_program(const std::string& name, std::string* path) {
  if (name.find('/') != std::string::npos) {
    *path = name;
    return executable(name);
  }
  const char* env = std::getenv("PATH");
  std::string dirs = env ? env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    std::string d = dirs.substr(start, colon - start);
    std::string cand = (d.empty() ? "." : d) + "/" + name;
    if (executable(cand)) {
      *path = cand;
      return true;
    }
    start = colon + 1;
  }
  return false;
}

bool read_task_env(int argc, char** argv, TaskEnv* t, std::string* error) {
  std::string argv0, nodelist;
  // Slurm gives the batch step no SLURM_STEP_ID; the plugin names it.
  const char* step = std::getenv(vmha_spank::kEnvStep);
  t->batch = step && std::string(step) == vmha_spank::kBatchStep;
  if (t->batch) t->step = vmha_spank::kBatchStep;
  if (!need(vmha_spank::kEnvArgv0, &argv0, error) || !need("SLURM_JOB_ID", &t->job, error) ||
      (!t->batch && !need("SLURM_STEP_ID", &t->step, error)) || !need("SLURM_PROCID", &t->rank, error) ||
      !need("SLURMD_NODENAME", &t->node, error) || !need("SLURM_JOB_NODELIST", &nodelist, error))
    return false;
  if (!vmha_spank::settings_from_environment([](const char* n) { return std::getenv(n); }, &t->settings, error))
    return false;
  if (!vmha_spank::expand_hostlist(nodelist, &t->nodes, error)) {
    *error = "SLURM_JOB_NODELIST '" + nodelist + "': " + *error;
    return false;
  }
  if (!resolve_program(argv0, &t->program)) {
    *error = argv0 + ": no such executable (searched PATH)";
    return false;
  }
  for (int i = 1; i < argc; ++i) t->args.push_back(argv[i]);
  char buf[4096];
  if (!getcwd(buf, sizeof buf)) {
    *error = std::string("getcwd: ") + std::strerror(errno);
    return false;
  }
  t->cwd = buf;
  t->dir = t->settings.statedir + "/job" + t->job + "/" + vmha_spank::task_dir_name(t->step, t->rank);
  return true;
}

std::vector<std::string> TaskEnv::read_only_options() const {
  std::vector<std::string> ro = vmha_spank::read_only_options(settings);
  if (!script.empty()) ro.insert(ro.end(), {"--ro", script});
  return ro;
}

std::vector<std::string> child_environment(const std::vector<std::string>& drop, const std::vector<std::string>& add) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string name = kv.substr(0, kv.find('='));
    bool skip = name.rfind(vmha_spank::kEnvPrefix, 0) == 0;
    for (const auto& d : drop) skip = skip || name == d;
    for (const auto& a : add) skip = skip || name == a.substr(0, a.find('='));
    if (!skip) env.push_back(kv);
  }
  env.insert(env.end(), add.begin(), add.end());
  return env;
}

}  // namespace vmha_task
