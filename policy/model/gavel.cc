#include "policy/model/gavel.h"

#include <cstdint>
#include <set>

#include <nlohmann/json.hpp>

#include "policy/io/csv.h"
#include "policy/util/safe_file.h"

namespace duet {

bool parse_gavel_key(const std::string& key, std::string& name, int& scale) {
  if (key.size() < 7 || key.compare(0, 2, "('") != 0 || key.back() != ')') return false;
  size_t q = key.rfind("', ");
  if (q == std::string::npos || q < 2) return false;
  name = key.substr(2, q - 2);
  std::string num = key.substr(q + 3, key.size() - q - 4);
  if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos || num.size() > 4) return false;
  scale = std::stoi(num);
  return scale >= 1 && !name.empty();
}

namespace {

// The file as JSON; a syntax error names its line and column.
nlohmann::json parse_json_file(const std::string& path) {
  std::string text;
  try {
    text = read_regular_file(path, kMaxGavelJsonBytes, "throughput table (JSON)");
  } catch (const FileError& e) { throw InputError(path, 0, 0, e.reason()); }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    int line = 1, col = 1;
    for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n')
        ++line, col = 1;
      else
        ++col;
    }
    throw InputError(path, line, col, std::string("invalid JSON: ") + e.what());
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for a double: no position
    throw InputError(path, 0, 0, std::string("invalid JSON: ") + e.what());
  }
}

// The JSON parsed but is not shaped like Gavel's table.
InputError shape_error(const std::string& path, const std::string& where, const std::string& what) {
  return InputError(path, 0, 0, "at " + where + ": expected " + what);
}

// A throughput: 0 or within the bounds of gavel.h.
double throughput(const std::string& path, const std::string& where, const nlohmann::json& v) {
  const double x = v.is_number() ? v.get<double>() : -1;
  if (!(x == 0 || (x >= kMinGavelThroughput && x <= kMaxGavelThroughput)))
    throw shape_error(path, where, "a throughput of 0 (not measured) or from 1e-9 to 1e9 steps/s");
  return x;
}

// Pass 1: job types (numbered as the GPU types, in key order, first name them)
// and alone throughputs at scale 1.
void read_alone(const std::string& path, nlohmann::json& j, const std::vector<std::string>& gpus, ThroughputTable& t) {
  struct Alone {
    std::string name;
    int gpu;
    double tp;
  };
  std::vector<Alone> alone;
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (size_t g = 0; g < gpus.size(); ++g) {
    const auto& tab = j[gpus[g]];
    if (!tab.is_object()) throw shape_error(path, "\"" + gpus[g] + "\"", "an object keyed by job type");
    for (auto& [k, v] : tab.items()) {
      std::string name;
      int scale = 0;
      const std::string where = "\"" + gpus[g] + "\"/\"" + k + "\"";
      if (!parse_gavel_key(k, name, scale))
        throw shape_error(path, "\"" + gpus[g] + "\"", "keys like \"('Model', 1)\", got \"" + k + "\"");
      if (!v.is_object() || !v.contains("null") || !v["null"].is_number())
        throw shape_error(path, where, "an object with a numeric \"null\" entry");
      const double tp = throughput(path, where + "/\"null\"", v["null"]);
      if (scale != 1) continue;
      if (seen.insert(name).second) names.push_back(name);
      alone.push_back({std::move(name), static_cast<int>(g), tp});
    }
  }
  if (names.size() > kMaxGavelJobTypes)
    throw shape_error(
        path, "top level",
        "at most " + std::to_string(kMaxGavelJobTypes) + " job types, got " + std::to_string(names.size()));
  t.set_job_types(std::move(names));
  for (const Alone& a : alone) t.set_alone(t.find_job_type(a.name), a.gpu, a.tp);
}

// Pass 2: pairs at scale 1 and (un)consolidated throughput at larger scales.
void read_pairs_and_scales(const std::string& path, nlohmann::json& j, const std::vector<std::string>& gpus,
                           ThroughputTable& t) {
  for (size_t g = 0; g < gpus.size(); ++g) {
    const auto& tab = j[gpus[g]];
    const auto unc =
        j.contains(gpus[g] + "_unconsolidated") ? j[gpus[g] + "_unconsolidated"] : nlohmann::json::object();
    for (auto& [k, v] : tab.items()) {
      std::string name, oname;
      int scale = 0, oscale = 0;
      parse_gavel_key(k, name, scale);
      int jt = t.find_job_type(name);
      if (jt < 0) continue;  // a multi-GPU entry of a model never measured alone: no ratio possible
      if (scale == 1) {
        for (auto& [ok, ov] : v.items()) {
          if (ok == "null") continue;
          const std::string where = "\"" + gpus[g] + "\"/\"" + k + "\"/\"" + ok + "\"";
          if (!parse_gavel_key(ok, oname, oscale) || !ov.is_array() || ov.size() != 2 || !ov[0].is_number())
            throw shape_error(path, where, "a pair [throughput, other's throughput]");
          const double tp = throughput(path, where, ov[0]);
          int o = t.find_job_type(oname);
          if (o >= 0 && oscale == 1) t.set_pair(jt, o, static_cast<int>(g), tp);
        }
      } else if (unc.contains(k) && unc[k].contains("null") && unc[k]["null"].is_number()) {
        const double u = throughput(path, "\"" + gpus[g] + "_unconsolidated\"/\"" + k + "\"/\"null\"", unc[k]["null"]);
        t.set_scaled(jt, ThroughputTable::scale_index(scale), static_cast<int>(g), v["null"].get<double>(), u);
      }
    }
  }
}

}  // namespace

ThroughputTable read_gavel(const std::string& path) {
  nlohmann::json j = parse_json_file(path);
  if (!j.is_object()) throw shape_error(path, "top level", "an object keyed by GPU type");

  std::vector<std::string> gpus;
  for (auto& [k, v] : j.items())
    if (k.find("_unconsolidated") == std::string::npos) gpus.push_back(k);
  int ref = -1;
  for (size_t i = 0; i < gpus.size(); ++i)
    if (gpus[i] == "v100") ref = static_cast<int>(i);
  if (ref < 0) throw shape_error(path, "top level", "the reference GPU type key \"v100\"");
  if (gpus.size() > kMaxGavelGpuTypes)
    throw shape_error(
        path, "top level",
        "at most " + std::to_string(kMaxGavelGpuTypes) + " GPU types, got " + std::to_string(gpus.size()));

  ThroughputTable t;
  t.set_gpu_types(gpus, ref);
  read_alone(path, j, gpus, t);
  read_pairs_and_scales(path, j, gpus, t);
  t.finish();
  return t;
}

}  // namespace duet
