// gnuplot PNGs for duet eval: the data as plain columns, one script, one run.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "policy/report/summary.h"

namespace duet {

static std::string label(const SimResult& r) { return r.ordering + "/" + r.placement; }

static std::string quote_sh(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

std::vector<std::string> write_plots(const std::string& dir, const std::vector<SimResult>& rows,
                                     const std::string& gnuplot) {
  namespace fs = std::filesystem;
  fs::create_directories(dir + "/plot-data");
  // One file per policy: CDF points (at most ~2000, evenly by rank) and samples.
  for (size_t i = 0; i < rows.size(); ++i) {
    const SimResult& r = rows[i];
    std::ofstream c(fmt::format("{}/plot-data/jct_{}.dat", dir, i));
    const size_t n = r.jct_sorted.size();
    const size_t stride = std::max<size_t>(1, n / 2000);
    for (size_t k = 0; k < n; k += stride) c << fmt::format("{} {}\n", r.jct_sorted[k] / 3600.0, double(k + 1) / n);
    if (n) c << fmt::format("{} 1\n", r.jct_sorted.back() / 3600.0);
    std::ofstream s(fmt::format("{}/plot-data/samples_{}.dat", dir, i));
    s << "# t_hours busy_gpus queued running util\n";
    for (const Sample& x : r.samples)
      s << fmt::format("{} {} {} {} {}\n", x.t / 3600.0, x.busy_gpus, x.queued, x.running,
                       r.total_gpus ? double(x.busy_gpus) / r.total_gpus : 0.0);
  }
  auto plot_all = [&](const std::string& file_fmt, const std::string& using_) {
    std::string s;
    for (size_t i = 0; i < rows.size(); ++i)
      s += fmt::format("{}'plot-data/{}' using {} with lines title '{}'", i ? ", \\\n     " : "",
                       fmt::format(fmt::runtime(file_fmt), i), using_, label(rows[i]));
    return s + "\n";
  };
  std::ofstream g(dir + "/plots.gp");
  g << "# gnuplot script written by duet eval; run: cd DIR && gnuplot plots.gp\n";
  g << "set terminal pngcairo size 1100,700 noenhanced font ',10'\nset key outside right\nset grid\n";
  g << "set output 'jct_cdf.png'\nset title 'JCT CDF'\nset xlabel 'JCT (hours, log scale)'\n"
       "set ylabel 'fraction of jobs'\nset logscale x\nset yrange [0:1]\n";
  g << "plot " << plot_all("jct_{}.dat", "1:2");
  g << "unset logscale x\nset autoscale y\nset yrange [0:*]\n";
  g << "set output 'queue.png'\nset title 'Queue length over time'\nset xlabel 'time (hours)'\nset ylabel 'pending "
       "jobs'\n";
  g << "plot " << plot_all("samples_{}.dat", "1:3");
  g << "set output 'gpu_util.png'\nset title 'GPU utilisation over time'\nset ylabel 'busy GPUs / all GPUs'\nset "
       "yrange [0:1]\n";
  g << "plot " << plot_all("samples_{}.dat", "1:5");
  g.close();
  if (gnuplot.empty()) return {};
  std::string cmd = "cd " + quote_sh(dir) + " && " + quote_sh(gnuplot) + " plots.gp 2> plots.log";
  int rc = std::system(cmd.c_str());
  if (rc != 0 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
    throw std::runtime_error("gnuplot failed (see " + dir + "/plots.log)");
  return {dir + "/jct_cdf.png", dir + "/queue.png", dir + "/gpu_util.png"};
}

}  // namespace duet
