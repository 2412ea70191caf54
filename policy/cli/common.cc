#include "policy/cli/common.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "policy/io/cluster.h"
#include "policy/io/gavel.h"

#ifndef DUET_PKGDATADIR
#define DUET_PKGDATADIR ""
#endif
#ifndef DUET_SYSCONFDIR
#define DUET_SYSCONFDIR ""
#endif
#ifndef DUET_SRCDIR
#define DUET_SRCDIR ""
#endif

namespace duet::cli {

static std::string first_existing(std::initializer_list<std::string> paths) {
  for (const auto& p : paths)
    if (!p.empty() && std::filesystem::is_regular_file(p)) return p;
  return "";
}

static std::string env_join(const char* var, const std::string& rel) {
  const char* v = std::getenv(var);
  return v && *v ? std::string(v) + "/" + rel : "";
}

std::string find_data(const std::string& rel) {
  return first_existing({env_join("DUET_DATA_DIR", rel), std::string(DUET_PKGDATADIR) + "/" + rel,
                         std::string(DUET_SRCDIR) + "/" + rel});
}

std::string find_etc(const std::string& name) {
  return first_existing({env_join("DUET_ETC_DIR", name), std::string(DUET_SYSCONFDIR) + "/duet/" + name,
                         std::string(DUET_SRCDIR) + "/etc/" + name});
}

ModelHook& model_hook();
std::string& model_path();

void Inputs::add_options(CLI::App& app) {
  app.add_option("--trace", trace, "job trace CSV (duet-trace(5); convert Philly with 'duet convert philly')")->required();
  app.add_option("--cluster", cluster, "cluster CSV (duet-cluster(5); convert PAI with 'duet convert pai')")->required();
  app.add_option("--seed", seed, "seed for job types, machine speeds, fluctuation, random placement")->capture_default_str();
  app.add_flag("--ideal", ideal, "every speed effect off: a job runs exactly its duration, preemption is free");
  app.add_option("--period", period, "decision period in seconds for preemptive policies")->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_flag("--drop-oversized", drop_oversized, "leave out (and count) jobs larger than the GPUs they may use");
  app.add_option("--throughputs", throughputs, "Gavel throughput JSON (default: the installed data/gavel copy)");
  app.add_option("--prices", prices, "GPU price/power CSV (duet-prices(5); default: the installed etc/gpu-prices.csv)");
  app.add_option("--model", model, "model file for the learned policies --order duet / --place duet (duet-model(5))")
      ->each([](const std::string& path) {
        model_path() = path;
        if (model_hook()) model_hook()(path);
      });
}

ModelHook& model_hook() {
  static ModelHook hook = nullptr;
  return hook;
}
void set_model_hook(ModelHook hook) { model_hook() = hook; }
std::string& model_path() {
  static std::string path;
  return path;
}
bool model_given() { return !model_path().empty(); }

std::unique_ptr<Loaded> load(const Inputs& in) {
  auto l = std::make_unique<Loaded>();
  std::string tp = in.throughputs.empty() ? find_data("data/gavel/simulation_throughputs.json") : in.throughputs;
  if (tp.empty()) throw std::runtime_error("cannot find data/gavel/simulation_throughputs.json; give --throughputs or set DUET_DATA_DIR");
  std::string pr = in.prices.empty() ? find_etc("gpu-prices.csv") : in.prices;
  if (pr.empty()) throw std::runtime_error("cannot find gpu-prices.csv; give --prices or set DUET_ETC_DIR");
  l->table = read_gavel(tp);
  l->prices = PriceTable::read(pr);
  l->trace = read_trace(in.trace);
  l->cluster = build_cluster(read_cluster(in.cluster), l->table);
  for (const auto& t : l->cluster.gpu_types) l->prices.lookup(t.name);  // fails early without a price
  return l;
}

static bool g_bar_shown = false;

std::function<void(double)> progress_bar(const std::string& label) {
  if (!isatty(STDERR_FILENO)) return {};
  return [label](double f) {
    int n = static_cast<int>(std::clamp(f, 0.0, 1.0) * 40);
    std::fprintf(stderr, "\r%-24.24s [%-40s] %3d%%", label.c_str(), std::string(n, '#').c_str(),
                 static_cast<int>(f * 100));
    std::fflush(stderr);
    g_bar_shown = true;
  };
}

void progress_done() {
  if (!g_bar_shown) return;
  std::fprintf(stderr, "\r%*s\r", 75, "");
  std::fflush(stderr);
  g_bar_shown = false;
}

namespace {
std::vector<std::pair<int, CommandSetup>>& commands() {
  static std::vector<std::pair<int, CommandSetup>> v;
  return v;
}
}  // namespace

CommandRegistrar::CommandRegistrar(int order, CommandSetup setup) { commands().emplace_back(order, setup); }

void setup_commands(CLI::App& app) {
  auto v = commands();
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [o, f] : v) f(app);
}

}  // namespace duet::cli
