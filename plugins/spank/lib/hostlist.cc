#include "plugins/spank/lib/hostlist.h"

namespace vmha_spank {

std::string pick_backup_node(const std::vector<std::string>& nodes, const std::string& self,
                             const std::string& policy) {
  if (policy == "last") {
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
      if (*it != self) return *it;
    return "";
  }
  size_t n = nodes.size(), me = n;
  for (size_t i = 0; i < n; ++i)
    if (nodes[i] == self) me = i;
  for (size_t k = 1; k <= n; ++k) {
    const std::string& cand = nodes[(me == n ? k - 1 : me + k) % n];
    if (cand != self) return cand;
  }
  return "";
}

}  // namespace vmha_spank
