// The learned scheduler's model file: network weights, GP hyper-parameters,
// the job-type vocabulary, feature normalisation and a format version, in one
// checked binary file. Layout: duet-model(5), section MODEL FILE.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "policy/learn/gp/gp_hyper.h"
#include "policy/learn/model/model_limits.h"
#include "policy/learn/model/net_config.h"
#include "policy/learn/model/spread_sets.h"

namespace duet::learn {

inline constexpr char kModelMagic[] = "DUETMODL";
// Format 1: every model that is not preemptive (written exactly as before
// format 2 existed). Format 2: format 1 with the ordering's preemptive flag
// (u32) after the network sizes; written only for preemptive models, so a
// build that reads format 1 only refuses them by their version. Format 3:
// format 2 (the flag may be 0) with the spread rule (u32) after it; written
// only for a rule other than fastest, so that older builds refuse a model
// whose placement they would get wrong.
inline constexpr std::uint32_t kModelVersion = 1;
inline constexpr std::uint32_t kModelVersionPreemptive = 2;
inline constexpr std::uint32_t kModelVersionSpread = 3;

struct Model {
  NetConfig nets;
  FeatureNorm job_norm;      // ordering.job_features entries
  FeatureNorm cluster_norm;  // ordering.cluster_features entries
  FeatureNorm machine_norm;  // placement.machine_features entries
  GpHyper gp;
  std::vector<std::string> job_types;  // GP job-type index -> name
  std::vector<NamedArray> weights;     // every name of all_param_shapes(nets)
  std::string provenance;              // e.g. the command that trained it
  SpreadSets spread = SpreadSets::fastest;  // the placement agent's rule for jobs no machine holds alone

  // Throws std::invalid_argument naming the first inconsistency (sizes of
  // the normalisations, missing/extra/mis-shaped weights, non-finite values).
  void validate() const;
  const NamedArray& weight(const std::string& name) const;  // throws if absent
  // Throws std::invalid_argument if the model's input widths differ from
  // what the caller's feature extractors produce.
  void check_inputs(std::uint32_t job_features, std::uint32_t cluster_features, std::uint32_t machine_features) const;
};

// The format version save_model writes for m.
std::uint32_t model_version(const Model& m);
// Writes atomically; throws FormatError on I/O errors or an invalid model.
void save_model(const Model& m, const std::string& path);
// Throws FormatError naming the file: bad magic, other format version,
// truncation, checksum mismatch, or weights whose shapes do not match the
// networks the file declares.
// The file must be a regular file of at most kMaxModelBytes: a FIFO, a
// device or a larger file is refused at once, naming the file.
Model load_model(const std::string& path);
// The same checks on a whole model file already in memory (e.g. a fuzzer's
// input); `name` is used in messages.
Model decode_model(std::string_view file, const std::string& name);

}  // namespace duet::learn
