// `vmha bench --corpus DIR`: the corpus of real programs (DIR/corpus.list,
// tests/vmha_corpus) as a user runs them, each in a fresh copy of DIR:
// natively, under `vmha run`, and replicated (`vmha run --backup`, async and
// stop-copy, a `vmha backup` child on this host). Wall times, median over
// the repetitions (each repetition runs the four in turn, so a loaded host
// weighs on all alike); slowdowns against native per program, then their
// median and maximum over the corpus.
#pragma once
#include <string>

namespace vmha {

struct CorpusBenchOptions {
  std::string dir;   // holds corpus.list and the programs' files
  std::string only;  // substring filter on program names
  int reps = 3;
  int epoch_ms = 0;  // 0: vmha run's default
  bool json = false;
};

int corpus_bench(const CorpusBenchOptions& opts);

}  // namespace vmha
