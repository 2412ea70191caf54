// A scenario spec: what kind of workload and cluster `duet scenario generate`
// draws (duet-scenario(1) lists every key with its default). The text format
// is one `key = value` a line, `#` starts a comment; a numeric key takes a
// number or a range `LO..HI`, drawn once per seed. `family` and `workload`
// name presets (families.cc) that are applied before the file's other keys,
// so a file can start from a preset and change a few keys.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

namespace duet {

struct Range {
  double lo = 0, hi = 0;
};

struct ScenarioSpec {
  std::string family = "mixed";        // cluster preset applied (for the record)
  std::string workload = "lognormal";  // workload preset applied

  // Workload.
  std::string source = "synthetic";  // synthetic | philly | philly-vc
  std::string philly_vc;             // philly-vc: "" = drawn among VCs with >= 200 jobs
  int jobs = 1000;
  Range load{0.9, 0.9};               // offered load: work / (last submit x capacity)
  std::string arrival = "poisson";    // poisson | diurnal | mmpp
  Range diurnal_amplitude{0.5, 0.5};  // rate = mean x (1 + A sin(2 pi t / period))
  double diurnal_period_h = 24;
  Range burst_ratio{10, 10};           // mmpp: burst rate / calm rate
  Range burst_fraction{0.1, 0.1};      // mmpp: share of time in bursts
  double burst_mean_s = 1800;          // mmpp: mean burst length
  std::string duration = "lognormal";  // lognormal | pareto
  Range duration_median_s{1800, 1800};
  Range duration_sigma{1.6, 1.6};
  Range pareto_alpha{1.5, 1.5};  // tail index
  Range pareto_min_s{300, 300};
  double duration_max_s = 30 * 86400.0;
  std::vector<std::pair<int, double>> gpu_mix{{1, 0.55},  {2, 0.12},  {4, 0.13}, {8, 0.12},
                                              {16, 0.05}, {32, 0.02}, {64, 0.01}};
  std::string job_types = "uniform";  // uniform | zipf | none
  double job_type_skew = 1.0;
  int users = 32, vcs = 4;
  double user_skew = 1.1;

  // Cluster.
  std::string cluster_source = "synthetic";  // synthetic | pai
  Range cluster_gpus{64, 1024};              // log-uniform
  Range gpu_types{2, 8};
  Range speed{0.2, 3.0};                 // flat types' speed vs V100, log-uniform
  int table_types = 3;                   // at most this many of K80, P100, V100
  std::vector<int> gpus_per_machine{8};  // one drawn per GPU type
  int rack_machines = 8;

  // Data files for the philly and pai sources; "" = the installed copies.
  std::string philly_path, pai_path;
};

// Applies a spec file's text on top of `spec`. Throws InputError naming
// `name`, the line and the key for an unknown key or a bad value.
void apply_spec_text(ScenarioSpec& spec, const std::string& text, const std::string& name);
// The same for a file (at most 1 MiB, a regular file).
void apply_spec_file(ScenarioSpec& spec, const std::string& path);
// One `key=value` (duet scenario generate --set); throws std::invalid_argument.
void apply_setting(ScenarioSpec& spec, const std::string& key, const std::string& value);

// Named presets: a name, one line of help, and the settings they apply.
struct Preset {
  const char* name;
  const char* help;
  const char* settings;  // spec file text
};
std::span<const Preset> cluster_families();
std::span<const Preset> workload_presets();
// Throw std::invalid_argument naming the known presets.
void apply_family(ScenarioSpec& spec, const std::string& name);
void apply_workload(ScenarioSpec& spec, const std::string& name);

// Every key and its value, in the spec file syntax (a spec that reads back equal).
std::string format_spec(const ScenarioSpec& spec);

}  // namespace duet
