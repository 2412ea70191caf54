// THE SEAM: where duet's learned agents are built for the Slurm plugins.
//
// `Scorer=model` and `Ranker=model` call loaders that the agents' adapters
// register (register_order_model_loader / register_placement_model_loader,
// see order_scorer.h and placement_agent.h). The adapters live in their own
// .cc files, linked into priority_duet.la / select_duet.la with their
// libraries (libduetlearn_torch.la + $(TORCH_LIBS), libduetlearn.la), so this
// library stays free of LibTorch and Slurm. With no loader registered, the
// model keys fail with one clear error and the plugins fall back (age+size
// priority; plain cons_tres node order).
#include <cerrno>
#include <cstring>
#include <fstream>

#include "plugins/common/order_scorer.h"
#include "plugins/common/placement_agent.h"

namespace duet::plugin {
namespace {

OrderModelLoader g_order_loader = nullptr;
PlacementModelLoader g_placement_loader = nullptr;

// Checks the file can be read at all; returns "" or why not.
std::string check_readable(const std::string& path, const char* key) {
  if (path.empty()) return std::string(key) + " is empty";
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string(key) + " " + path + ": cannot open: " + std::strerror(errno);
  char byte;
  if (!in.read(&byte, 1)) return std::string(key) + " " + path + ": empty file";
  return "";
}

std::unique_ptr<OrderScorer> make_model_scorer(const DuetConf& conf, std::string* error) {
  std::string why = check_readable(conf.model_path, "ModelPath");
  if (why.empty() && !g_order_loader)
    why = "ModelPath " + conf.model_path +
          ": no ordering agent is built into this priority/duet (plugins/common/agent_factory.cc)";
  if (!why.empty()) {
    *error = why;
    return nullptr;
  }
  std::string err;
  auto scorer = g_order_loader(conf.model_path, conf, &err);
  if (!scorer) *error = "ModelPath " + conf.model_path + ": " + (err.empty() ? "not loaded" : err);
  return scorer;
}

PlacementAgent make_model_placement(const DuetConf& conf, std::vector<std::string>* errors) {
  std::string why = check_readable(conf.placement_model_path, "PlacementModelPath");
  if (why.empty() && !g_placement_loader)
    why = "PlacementModelPath " + conf.placement_model_path +
          ": no placement agent is built into this select/duet (plugins/common/agent_factory.cc)";
  if (!why.empty()) {
    errors->push_back(why);
    return {};
  }
  std::string err;
  PlacementAgent agent = g_placement_loader(conf.placement_model_path, conf, &err);
  if (!agent.ranker)
    errors->push_back("PlacementModelPath " + conf.placement_model_path + ": " +
                      (err.empty() ? "not loaded" : err));
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
  } catch (...) {
    *error = std::string("building scorer '") + conf.scorer + "': unknown exception";
  }
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
      agent.ranker = make_prefer_fast_ranker(conf.node_speeds_file, &err);
      if (!agent.ranker) errors->push_back("NodeSpeedsFile " + err);
    }
    // A learned agent brings its own observer; otherwise use the builtin one.
    if (!agent.observer && conf.observer == "node-stats") agent.observer = make_node_stats_observer();
  } catch (const std::exception& e) {
    errors->push_back(std::string("building placement agent: ") + e.what());
  } catch (...) {
    errors->push_back("building placement agent: unknown exception");
  }
  return agent;
}

}  // namespace duet::plugin
