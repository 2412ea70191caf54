#include "plugins/spank/lib/batch_step.h"

namespace vmha_spank {

std::string task_dir_name(const std::string& step, const std::string& rank) {
  return (step == kBatchStep ? std::string(kBatchStep) : "step" + step) + ".task" + rank;
}

bool starts_srun(const std::string& text) {
  for (size_t at = text.find("srun"); at != std::string::npos; at = text.find("srun", at + 1)) {
    // Quotes, braces and `=` too: `bash -c 'srun ...'`, `{ srun ...; }`, `S=srun`.
    bool word_start = at == 0 || std::string(" \t\r\n;&|(`/'\"{!=").find(text[at - 1]) != std::string::npos;
    bool word_end = at + 4 == text.size() || std::string(" \t\r\n;&|)`'\"}<>").find(text[at + 4]) != std::string::npos;
    if (word_start && word_end) return true;
  }
  return false;
}

}  // namespace vmha_spank
