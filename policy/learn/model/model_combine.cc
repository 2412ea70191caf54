#include "policy/learn/model/model_combine.h"

#include <stdexcept>

namespace duet::learn {

Model combine_agents(const Model& order_from, const Model& place_from) {
  // Same parameter names and shapes <=> same network sizes.
  const auto a = all_param_shapes(order_from.nets), b = all_param_shapes(place_from.nets);
  for (std::size_t i = 0; i < a.size() || i < b.size(); ++i) {
    if (i >= a.size() || i >= b.size() || a[i].name != b[i].name || a[i].shape != b[i].shape)
      throw std::invalid_argument(
          "cannot combine: the models declare different networks (" +
          (i < a.size() ? a[i].name + " " + shape_string(a[i].shape) : std::string("none")) + " vs " +
          (i < b.size() ? b[i].name + " " + shape_string(b[i].shape) : std::string("none")) + ")");
  }
  Model m = order_from;
  m.machine_norm = place_from.machine_norm;
  m.gp = place_from.gp;
  m.spread = place_from.spread;
  m.job_types = place_from.job_types;
  m.weights.clear();
  // The critic only trains; it comes with the ordering side.
  for (const NamedArray& w : order_from.weights)
    if (w.name.rfind("placement.", 0) != 0) m.weights.push_back(w);
  for (const NamedArray& w : place_from.weights)
    if (w.name.rfind("placement.", 0) == 0) m.weights.push_back(w);
  m.provenance =
      "combined: ordering from [" + order_from.provenance + "], placement from [" + place_from.provenance + "]";
  m.validate();
  return m;
}

}  // namespace duet::learn
