#include "policy/learn/model/model_file.h"

#include <cmath>
#include <map>
#include <stdexcept>

#include "policy/learn/gp/binary_io.h"
#include "policy/util/printable.h"

namespace duet::learn {

namespace {

void check_norm(const FeatureNorm& n, std::uint32_t want, const char* what) {
  if (n.mean.size() != want || n.scale.size() != want)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(n.mean.size()) + " means and " +
                                std::to_string(n.scale.size()) + " scales, the networks need " + std::to_string(want));
  for (std::size_t i = 0; i < want; ++i)
    if (!std::isfinite(n.mean[i]) || !std::isfinite(n.scale[i]))
      throw std::invalid_argument(std::string(what) + "[" + std::to_string(i) + "] is not finite");
}

void write_norm(ByteWriter& w, const FeatureNorm& n) {
  w.u32(static_cast<std::uint32_t>(n.mean.size()));
  w.f32s(n.mean.data(), n.mean.size());
  w.f32s(n.scale.data(), n.scale.size());
}

FeatureNorm read_norm(ByteReader& r, const char* what) {
  FeatureNorm n;
  auto k = r.u32(what);
  if (k > 4096) r.error(std::string(what) + ": " + std::to_string(k) + " features, expected <= 4096");
  n.mean.resize(k);
  n.scale.resize(k);
  r.f32s(n.mean.data(), k, what);
  r.f32s(n.scale.data(), k, what);
  return n;
}

// a * b, or false when it overflows (2^20 x 2^20 x 2^20 x 8 wrapped to a
// negative count that passed the size check).
bool checked_mul(std::int64_t a, std::int64_t b, std::int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

}  // namespace

void Model::validate() const {
  nets.validate();
  gp.validate();
  check_norm(job_norm, nets.ordering.job_features, "job_norm");
  check_norm(cluster_norm, nets.ordering.cluster_features, "cluster_norm");
  check_norm(machine_norm, nets.placement.machine_features, "machine_norm");
  std::map<std::string, const NamedArray*> have;
  for (const auto& a : weights) {
    if (!have.emplace(a.name, &a).second) throw std::invalid_argument("weights " + a.name + " appear twice");
  }
  for (const auto& want : all_param_shapes(nets)) {
    auto it = have.find(want.name);
    if (it == have.end()) throw std::invalid_argument("weights " + want.name + " missing");
    const NamedArray& a = *it->second;
    if (a.shape != want.shape)
      throw std::invalid_argument("weights " + want.name + ": shape " + shape_string(a.shape) +
                                  ", the networks declared in the model need " + shape_string(want.shape));
    std::int64_t count = 1;
    for (auto d : a.shape)
      if (!checked_mul(count, d, &count)) throw std::invalid_argument("weights " + want.name + ": too many values");
    if (static_cast<std::int64_t>(a.data.size()) != count)
      throw std::invalid_argument("weights " + want.name + ": " + std::to_string(a.data.size()) + " values for shape " +
                                  shape_string(a.shape));
    for (float v : a.data)
      if (!std::isfinite(v)) throw std::invalid_argument("weights " + want.name + " contain a non-finite value");
    have.erase(it);
  }
  if (!have.empty()) throw std::invalid_argument("weights " + have.begin()->first + " are not part of the networks");
}

const NamedArray& Model::weight(const std::string& name) const {
  for (const auto& a : weights)
    if (a.name == name) return a;
  throw std::invalid_argument("model has no weights named " + name);
}

void Model::check_inputs(std::uint32_t job_features, std::uint32_t cluster_features,
                         std::uint32_t machine_features) const {
  auto cmp = [](const char* what, std::uint32_t model, std::uint32_t caller) {
    if (model != caller)
      throw std::invalid_argument(std::string("model expects ") + std::to_string(model) + " " + what +
                                  ", this build produces " + std::to_string(caller) + " (model from another version?)");
  };
  cmp("job features", nets.ordering.job_features, job_features);
  cmp("cluster features", nets.ordering.cluster_features, cluster_features);
  cmp("machine features", nets.placement.machine_features, machine_features);
}

std::uint32_t model_version(const Model& m) {
  if (m.spread != SpreadSets::fastest) return kModelVersionSpread;
  return m.nets.ordering.preemptive ? kModelVersionPreemptive : kModelVersion;
}

void save_model(const Model& m, const std::string& path) {
  try {
    m.validate();
  } catch (const std::invalid_argument& e) {
    throw FormatError(path + ": refusing to save an invalid model: " + e.what());
  }
  ByteWriter w;
  const auto& o = m.nets.ordering;
  const auto& p = m.nets.placement;
  for (auto v : {o.job_features, o.cluster_features, o.hidden, o.embed, o.head_hidden, o.order_message,
                 p.machine_features, p.hidden, p.placement_message, m.nets.critic.hidden})
    w.u32(v);
  if (model_version(m) >= kModelVersionPreemptive) w.u32(o.preemptive);
  if (model_version(m) >= kModelVersionSpread) w.u32(static_cast<std::uint32_t>(m.spread));
  write_norm(w, m.job_norm);
  write_norm(w, m.cluster_norm);
  write_norm(w, m.machine_norm);
  write_hyper(w, m.gp);
  w.u32(static_cast<std::uint32_t>(m.job_types.size()));
  for (const auto& t : m.job_types) w.str(t);
  w.str(m.provenance);
  w.u32(static_cast<std::uint32_t>(m.weights.size()));
  for (const auto& a : m.weights) {
    w.str(a.name);
    w.u32(static_cast<std::uint32_t>(a.shape.size()));
    for (auto d : a.shape) w.i64(d);
    w.f32s(a.data.data(), a.data.size());
  }
  write_container(path, std::string_view(kModelMagic, 8), model_version(m), w.bytes());
}

namespace {

Model decode_payload(const VersionedPayload& file, const std::string& path) {
  ByteReader r(file.payload, path);
  Model m;
  auto& o = m.nets.ordering;
  auto& p = m.nets.placement;
  for (auto* v : {&o.job_features, &o.cluster_features, &o.hidden, &o.embed, &o.head_hidden, &o.order_message,
                  &p.machine_features, &p.hidden, &p.placement_message, &m.nets.critic.hidden})
    *v = r.u32("network size");
  if (file.version >= kModelVersionPreemptive) {
    o.preemptive = r.u32("preemptive flag");
    const bool none_ok = file.version >= kModelVersionSpread;  // format 3 may hold a model that is not preemptive
    if (o.preemptive != kPreemptLas && o.preemptive != kPreemptGittins && !(none_ok && o.preemptive == 0))
      r.error(none_ok ? "the preemptive flag must be 0 (none), 1 (LAS prior) or 2 (Gittins prior), it is " +
                            std::to_string(o.preemptive)
                      : "format 2 is written for preemptive models only: the flag must be 1 (LAS prior) or 2 "
                        "(Gittins prior), it is " +
                            std::to_string(o.preemptive));
  }
  if (file.version >= kModelVersionSpread) {
    const std::uint32_t s = r.u32("spread rule");
    if (s < static_cast<std::uint32_t>(SpreadSets::tight) || s > static_cast<std::uint32_t>(SpreadSets::learned))
      r.error(
          "format 3 is written for a spread rule other than fastest: it must be 1 (tight), 2 (slow) or 3 "
          "(learned), it is " +
          std::to_string(s));
    m.spread = static_cast<SpreadSets>(s);
  }
  m.job_norm = read_norm(r, "job_norm");
  m.cluster_norm = read_norm(r, "cluster_norm");
  m.machine_norm = read_norm(r, "machine_norm");
  m.gp = read_hyper(r);
  const auto nt = r.u32("job type count");
  if (nt > 1u << 16) r.error("job type count " + std::to_string(nt) + " is implausible");
  for (std::uint32_t i = 0; i < nt; ++i) m.job_types.push_back(r.str("job type name", 4096));
  m.provenance = r.str("provenance", 1 << 16);
  const auto na = r.u32("weight array count");
  if (na > 4096) r.error("weight array count " + std::to_string(na) + " is implausible");
  for (std::uint32_t i = 0; i < na; ++i) {
    NamedArray a;
    a.name = r.str("weight name", 256);
    const auto rank = r.u32("weight rank");
    if (rank > 4) r.error("weights " + a.name + ": rank " + std::to_string(rank) + ", expected <= 4");
    std::int64_t count = 1;
    for (std::uint32_t d = 0; d < rank; ++d) {
      const auto dim = r.i64("weight dimension");
      if (dim < 1 || dim > (1 << 20))
        r.error("weights " + a.name + ": dimension " + std::to_string(dim) + " out of range");
      a.shape.push_back(dim);
      if (!checked_mul(count, dim, &count) || count > kMaxWeightValues)
        r.error("weights " + a.name + ": shape " + shape_string(a.shape) + "... holds more than " +
                std::to_string(kMaxWeightValues) + " values");
    }
    // Before allocating: a short file must not make us reserve 256 MiB.
    if (static_cast<std::uint64_t>(count) > r.left() / sizeof(float))
      r.error("weights " + a.name + ": " + std::to_string(count) + " values do not fit in the " +
              std::to_string(r.left()) + " bytes left (truncated or corrupt)");
    a.data.resize(static_cast<std::size_t>(count));
    r.f32s(a.data.data(), a.data.size(), a.name.c_str());
    m.weights.push_back(std::move(a));
  }
  if (!r.at_end()) r.error("trailing bytes after the last weight array");
  try {
    m.validate();
  } catch (const std::invalid_argument& e) { throw FormatError(printable(path) + ": " + printable(e.what())); }
  return m;
}

}  // namespace

Model load_model(const std::string& path) {
  return decode_payload(read_container_versions(path, std::string_view(kModelMagic, 8), kModelVersion,
                                                kModelVersionSpread, "duet model file", kMaxModelBytes),
                        path);
}

Model decode_model(std::string_view file, const std::string& name) {
  return decode_payload(decode_container_versions(file, name, std::string_view(kModelMagic, 8), kModelVersion,
                                                  kModelVersionSpread, "duet model file"),
                        name);
}

}  // namespace duet::learn
