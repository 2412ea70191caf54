// The spec keys in one table: each knows how to read its value, check it and
// write it back, so parsing, --set and format_spec cannot disagree.
#include "policy/scenario/spec.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "policy/io/csv.h"
#include "policy/util/safe_file.h"

namespace duet {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

double number(const std::string& v, double lo, double hi) {
  double x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size() || !std::isfinite(x))
    throw std::invalid_argument(fmt::format("expected a number, got '{}'", v));
  if (x < lo || x > hi) throw std::invalid_argument(fmt::format("{} is outside [{}, {}]", v, lo, hi));
  return x;
}

int integer(const std::string& v, double lo, double hi) {
  double x = number(v, lo, hi);
  if (x != std::floor(x)) throw std::invalid_argument(fmt::format("expected an integer, got '{}'", v));
  return static_cast<int>(x);
}

Range range(const std::string& v, double lo, double hi) {
  size_t dots = v.find("..");
  if (dots == std::string::npos) {
    double x = number(v, lo, hi);
    return {x, x};
  }
  Range r{number(trim(v.substr(0, dots)), lo, hi), number(trim(v.substr(dots + 2)), lo, hi)};
  if (r.lo > r.hi) throw std::invalid_argument(fmt::format("range '{}' has LO > HI", v));
  return r;
}

std::string choice(const std::string& v, std::initializer_list<const char*> allowed) {
  std::string known;
  for (const char* a : allowed) {
    if (v == a) return v;
    known += (known.empty() ? "" : ", ") + std::string(a);
  }
  throw std::invalid_argument(fmt::format("expected one of {}, got '{}'", known, v));
}

std::string fmt_range(const Range& r) {
  return r.lo == r.hi ? fmt::format("{}", r.lo) : fmt::format("{}..{}", r.lo, r.hi);
}

// "1:0.55 2:0.12 ..." : GPU count 1..64 and a weight > 0.
std::vector<std::pair<int, double>> gpu_mix(const std::string& v) {
  std::vector<std::pair<int, double>> mix;
  std::istringstream in(v);
  std::string item;
  while (in >> item) {
    size_t c = item.find(':');
    if (c == std::string::npos) throw std::invalid_argument(fmt::format("expected GPUS:WEIGHT, got '{}'", item));
    mix.emplace_back(integer(item.substr(0, c), 1, 1024), number(item.substr(c + 1), 1e-9, 1e9));
  }
  if (mix.empty()) throw std::invalid_argument("expected at least one GPUS:WEIGHT");
  return mix;
}

std::vector<int> int_list(const std::string& v, double lo, double hi) {
  std::vector<int> out;
  std::istringstream in(v);
  std::string item;
  while (in >> item) out.push_back(integer(item, lo, hi));
  if (out.empty()) throw std::invalid_argument("expected at least one number");
  return out;
}

struct Key {
  const char* name;
  std::function<void(ScenarioSpec&, const std::string&)> set;
  std::function<std::string(const ScenarioSpec&)> get;
};

#define NUM_KEY(field, lo, hi)                                                                                        \
  Key {                                                                                                               \
#field, [](ScenarioSpec & s,                                                                                      \
               const std::string&                                                                                     \
                   v) { s.field = number(v, lo, hi); },                                                               \
                                                     [](const ScenarioSpec& s) { return fmt::format("{}", s.field); } \
  }
#define INT_KEY(field, lo, hi)                                                                                         \
  Key {                                                                                                                \
#field, [](ScenarioSpec & s,                                                                                       \
               const std::string&                                                                                      \
                   v) { s.field = integer(v, lo, hi); },                                                               \
                                                      [](const ScenarioSpec& s) { return fmt::format("{}", s.field); } \
  }
#define RANGE_KEY(field, lo, hi)                                                                                \
  Key {                                                                                                         \
#field, [](ScenarioSpec & s,                                                                                \
               const std::string&                                                                               \
                   v) { s.field = range(v, lo, hi); }, [](const ScenarioSpec& s) { return fmt_range(s.field); } \
  }
#define TEXT_KEY(field, ...)                                                                                         \
  Key {                                                                                                              \
#field,                                                                                                          \
        [](ScenarioSpec & s,                                                                                         \
           const std::string& v) { s.field = choice(v, {__VA_ARGS__}); },                                            \
                                                                       [](const ScenarioSpec& s) { return s.field; } \
  }
#define FREE_KEY(field)                                                                                                \
  Key {                                                                                                                \
#field, [](ScenarioSpec & s, const std::string& v) { s.field = v; }, [](const ScenarioSpec& s) { return s.field; } \
  }

const Key kKeys[] = {
    TEXT_KEY(source, "synthetic", "philly", "philly-vc"),
    FREE_KEY(philly_vc),
    INT_KEY(jobs, 1, 1000000),
    RANGE_KEY(load, 0.01, 10),
    TEXT_KEY(arrival, "poisson", "diurnal", "mmpp"),
    RANGE_KEY(diurnal_amplitude, 0, 0.95),
    NUM_KEY(diurnal_period_h, 0.01, 8760),
    RANGE_KEY(burst_ratio, 1, 1000),
    RANGE_KEY(burst_fraction, 0.001, 0.999),
    NUM_KEY(burst_mean_s, 1, 1e7),
    TEXT_KEY(duration, "lognormal", "pareto"),
    RANGE_KEY(duration_median_s, 1, 1e7),
    RANGE_KEY(duration_sigma, 0, 5),
    RANGE_KEY(pareto_alpha, 0.5, 10),
    RANGE_KEY(pareto_min_s, 1, 1e7),
    NUM_KEY(duration_max_s, 1, 1e8),
    Key{"gpu_mix", [](ScenarioSpec& s, const std::string& v) { s.gpu_mix = gpu_mix(v); },
        [](const ScenarioSpec& s) {
          std::string o;
          for (auto [g, w] : s.gpu_mix) o += fmt::format("{}{}:{}", o.empty() ? "" : " ", g, w);
          return o;
        }},
    TEXT_KEY(job_types, "uniform", "zipf", "none"),
    NUM_KEY(job_type_skew, 0, 10),
    INT_KEY(users, 1, 100000),
    INT_KEY(vcs, 1, 10000),
    NUM_KEY(user_skew, 0, 10),
    TEXT_KEY(cluster_source, "synthetic", "pai"),
    RANGE_KEY(cluster_gpus, 1, 1000000),
    RANGE_KEY(gpu_types, 1, 64),
    RANGE_KEY(speed, 0.001, 1000),
    INT_KEY(table_types, 0, 3),
    Key{"gpus_per_machine", [](ScenarioSpec& s, const std::string& v) { s.gpus_per_machine = int_list(v, 1, 1024); },
        [](const ScenarioSpec& s) { return fmt::format("{}", fmt::join(s.gpus_per_machine, " ")); }},
    INT_KEY(rack_machines, 1, 100000),
    FREE_KEY(philly_path),
    FREE_KEY(pai_path),
};

const Key& find_key(const std::string& name) {
  for (const Key& k : kKeys)
    if (name == k.name) return k;
  throw std::invalid_argument(fmt::format("unknown key '{}' (see duet-scenario(1))", name));
}

struct Line {
  std::string key, value;
  int line;
};

// The file's settings; `family`/`workload` are returned apart (applied first).
std::vector<Line> split_lines(const std::string& text, const std::string& name) {
  std::vector<Line> out;
  std::istringstream in(text);
  std::string raw;
  for (int n = 1; std::getline(in, raw); ++n) {
    std::string s = trim(raw.substr(0, raw.find('#')));
    if (s.empty()) continue;
    size_t eq = s.find('=');
    if (eq == std::string::npos) throw InputError(name, n, 1, "expected 'key = value'");
    out.push_back({trim(s.substr(0, eq)), trim(s.substr(eq + 1)), n});
  }
  return out;
}

const Preset& find_preset(std::span<const Preset> presets, const std::string& name, const char* kind) {
  std::string known;
  for (const Preset& p : presets) {
    if (name == p.name) return p;
    known += (known.empty() ? "" : ", ") + std::string(p.name);
  }
  throw std::invalid_argument(fmt::format("unknown {} '{}' (known: {})", kind, name, known));
}

}  // namespace

void apply_setting(ScenarioSpec& spec, const std::string& key, const std::string& value) {
  if (key == "family") return apply_family(spec, value);
  if (key == "workload") return apply_workload(spec, value);
  const Key& k = find_key(key);
  try {
    k.set(spec, value);
  } catch (const std::invalid_argument& e) { throw std::invalid_argument(fmt::format("{}: {}", key, e.what())); }
}

void apply_spec_text(ScenarioSpec& spec, const std::string& text, const std::string& name) {
  std::vector<Line> lines = split_lines(text, name);
  // Presets first, so that the file's own keys change them.
  for (int pass = 0; pass < 2; ++pass)
    for (const Line& l : lines) {
      const bool preset = l.key == "family" || l.key == "workload";
      if (preset != (pass == 0)) continue;
      try {
        apply_setting(spec, l.key, l.value);
      } catch (const std::invalid_argument& e) { throw InputError(name, l.line, 1, e.what()); }
    }
}

void apply_spec_file(ScenarioSpec& spec, const std::string& path) {
  apply_spec_text(spec, read_regular_file(path, 1 << 20, "scenario spec"), path);
}

void apply_family(ScenarioSpec& spec, const std::string& name) {
  const Preset& p = find_preset(cluster_families(), name, "cluster family");
  apply_spec_text(spec, p.settings, std::string("family ") + p.name);
  spec.family = p.name;
}

void apply_workload(ScenarioSpec& spec, const std::string& name) {
  const Preset& p = find_preset(workload_presets(), name, "workload");
  apply_spec_text(spec, p.settings, std::string("workload ") + p.name);
  spec.workload = p.name;
}

std::string format_spec(const ScenarioSpec& spec) {
  // The presets' names are the record of where the values came from; the
  // keys after them hold the values themselves, so reading back gives the same.
  std::string o = fmt::format("family = {}\nworkload = {}\n", spec.family, spec.workload);
  for (const Key& k : kKeys) o += fmt::format("{} = {}\n", k.name, k.get(spec));
  return o;
}

}  // namespace duet
