// The placement agent = a node ranker plus an observer; a learned agent (the
// RWGP) is usually one object implementing both.
#pragma once

#include <memory>
#include <string>

#include "plugins/seam/duet_conf.h"
#include "plugins/seam/model_file.h"
#include "plugins/seam/node_ranker.h"
#include "plugins/seam/observer.h"

namespace duet::plugin {

struct PlacementAgent {
  std::shared_ptr<NodeRanker> ranker;  // nullptr = plain cons_tres order
  std::shared_ptr<Observer> observer;  // nullptr = nothing learned
};

// Builds what conf.ranker / conf.observer name. Errors (one line each, naming
// file and cause) go to *errors; the parts that failed are nullptr. Never throws.
PlacementAgent make_placement_agent(const DuetConf& conf, std::vector<std::string>* errors);

// THE SEAM for the learned placement agent (the RWGP): `Ranker=model` reads
// conf.placement_model_path once and calls the registered loader with its
// bytes; it returns the agent (ranker and, usually, the same object as
// observer) or sets *error. select/duet's init() registers it
// (register_placement_agent(), plugins/select/duet/placement_model.h), as for
// the ordering agent (order_scorer.h).
using PlacementModelLoader = PlacementAgent (*)(const ModelFile& model, const DuetConf& conf, std::string* error);
void register_placement_model_loader(PlacementModelLoader loader);

}  // namespace duet::plugin
