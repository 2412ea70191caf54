// THE SEAM: where duet's learned agents are built for the Slurm plugins.
//
// `Scorer=model` and `Ranker=model` read the model file once (checked: a
// regular file within the size limit, not empty, its owner trusted) and call
// loaders that the agents' adapters register when their plugin starts
// (register_order_model_loader / register_placement_model_loader, see
// order_scorer.h and placement_agent.h). The adapters live in their own .cc
// files, linked into priority_duet.la / select_duet.la with their torch-free
// learn libraries ($(LEARN_LIBS), policy/learn/Makefile.inc), so this library
// stays free of LibTorch and Slurm. With no loader registered, the model keys
// fail with one clear error and the plugins fall back (age+size priority;
// plain cons_tres node order).
#include "plugins/seam/file_cksum.h"
#include "plugins/seam/file_trust.h"
#include "plugins/seam/seam.h"
#include "policy/io/node_speeds.h"
#include "policy/learn/model/model_limits.h"
#include "policy/model/gavel.h"
#include "policy/util/printable.h"
#include "policy/util/safe_file.h"

namespace duet::plugin {
namespace {

OrderModelLoader g_order_loader = nullptr;
PlacementModelLoader g_placement_loader = nullptr;

// With conf.trusted_uid (in slurmctld: SlurmUser), a file others could
// change is refused (file_trust.h): whoever writes it would steer the scheduler.
bool owner_trusted(const DuetConf& conf, const std::string& path, const char* key, std::string* error) {
  if (std::string why; conf.trusted_uid && !file_trusted(path, *conf.trusted_uid, &why)) {
    *error = std::string(key) + " " + printable(path) + ": refused: " + why;
    return false;
  }
  return true;
}

// Checks the file can be used at all: named, a regular file within
// max_bytes, not empty, its owner trusted.
bool check_file(const DuetConf& conf, const std::string& path, const char* key, std::uint64_t max_bytes,
                const char* what, std::string* error) {
  if (path.empty()) {
    *error = std::string(key) + " is empty";
    return false;
  }
  std::uint64_t size = 0;
  try {
    open_regular_file(path, max_bytes, what, &size);  // regular, not too large, non-blocking
  } catch (const FileError& e) {
    *error = std::string(key) + " " + e.what();
    return false;
  }
  if (size == 0) {
    *error = std::string(key) + " " + printable(path) + ": empty file";
    return false;
  }
  return owner_trusted(conf, path, key, error);
}

// The model file, read once with check_file's checks (one open, not one to
// check and one to read); the loader decodes these bytes and names them by
// the checksum of the same bytes.
bool read_model(const DuetConf& conf, const std::string& path, const char* key, ModelFile* model,
                std::string* error) {
  if (path.empty()) {
    *error = std::string(key) + " is empty";
    return false;
  }
  try {
    model->bytes = read_regular_file(path, learn::kMaxModelBytes, "duet model file");  // check_file's checks
  } catch (const FileError& e) {
    *error = std::string(key) + " " + e.what();
    return false;
  }
  if (model->bytes.empty()) {
    *error = std::string(key) + " " + printable(path) + ": empty file";
    return false;
  }
  if (!owner_trusted(conf, path, key, error)) return false;
  model->path = path;
  model->cksum = bytes_cksum(model->bytes);
  return true;
}

// NodeSpeedsFile, when set.
bool check_speeds(const DuetConf& conf, std::string* error) {
  if (conf.node_speeds_file.empty()) return true;
  return check_file(conf, conf.node_speeds_file, "NodeSpeedsFile", kMaxNodeSpeedsBytes, "node speeds CSV", error);
}

// JobTypeSpeedsFile, when set (its size limit: policy/model/gavel.h).
bool check_job_type_speeds(const DuetConf& conf, std::string* error) {
  if (conf.job_type_speeds_file.empty()) return true;
  return check_file(conf, conf.job_type_speeds_file, "JobTypeSpeedsFile", kMaxGavelJsonBytes, "throughput table (JSON)",
                    error);
}

std::unique_ptr<OrderScorer> make_model_scorer(const DuetConf& conf, std::string* error) {
  ModelFile model;
  if (!read_model(conf, conf.model_path, "ModelPath", &model, error)) return nullptr;
  if (!g_order_loader) {
    *error = "ModelPath " + conf.model_path +
             ": no ordering agent is built into this priority/duet (plugins/seam/agent_factory.cc)";
    return nullptr;
  }
  std::string err;
  auto scorer = g_order_loader(model, conf, &err);
  if (!scorer) *error = "ModelPath " + conf.model_path + ": " + (err.empty() ? "not loaded" : err);
  return scorer;
}

PlacementAgent make_model_placement(const DuetConf& conf, std::vector<std::string>* errors) {
  std::string why;
  ModelFile model;
  if (!read_model(conf, conf.placement_model_path, "PlacementModelPath", &model, &why) || !check_speeds(conf, &why) ||
      !check_job_type_speeds(conf, &why)) {
    errors->push_back(why);
    return {};
  }
  if (!g_placement_loader) {
    errors->push_back("PlacementModelPath " + conf.placement_model_path +
                      ": no placement agent is built into this select/duet (plugins/seam/agent_factory.cc)");
    return {};
  }
  std::string err;
  PlacementAgent agent = g_placement_loader(model, conf, &err);
  if (!agent.ranker)
    errors->push_back("PlacementModelPath " + conf.placement_model_path + ": " + (err.empty() ? "not loaded" : err));
  return agent;
}

}  // namespace

void register_order_model_loader(OrderModelLoader loader) { g_order_loader = loader; }
void register_placement_model_loader(PlacementModelLoader loader) { g_placement_loader = loader; }

std::unique_ptr<OrderScorer> make_order_scorer(const DuetConf& conf, std::string* error) {
  std::string ignored;
  if (!error) error = &ignored;
  try {
    if (conf.scorer == "small-first") return make_small_first_scorer();
    if (conf.scorer == "fallback") return make_fallback_scorer(conf);
    return make_model_scorer(conf, error);
  } catch (const std::exception& e) {
    *error = std::string("building scorer '") + conf.scorer + "': " + e.what();
  } catch (...) { *error = std::string("building scorer '") + conf.scorer + "': unknown exception"; }
  return nullptr;
}

PlacementAgent make_placement_agent(const DuetConf& conf, std::vector<std::string>* errors) {
  std::vector<std::string> ignored;
  if (!errors) errors = &ignored;
  PlacementAgent agent;
  try {
    if (conf.ranker == "model") {
      agent = make_model_placement(conf, errors);
    } else if (conf.ranker == "prefer-fast") {
      std::string err;
      if (check_speeds(conf, &err)) {
        agent.ranker = make_prefer_fast_ranker(conf.node_speeds_file, &err);
        if (!agent.ranker) err = "NodeSpeedsFile " + err;
      }
      if (!agent.ranker) errors->push_back(err);
    }
    // A learned agent brings its own observer; otherwise use the builtin one.
    if (!agent.observer && conf.observer == "node-stats") agent.observer = make_node_stats_observer();
  } catch (const std::exception& e) {
    errors->push_back(std::string("building placement agent: ") + e.what());
  } catch (...) { errors->push_back("building placement agent: unknown exception"); }
  return agent;
}

}  // namespace duet::plugin
