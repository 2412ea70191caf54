#include "vmha/bench/corpus_bench.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "vmha/bench/repl_bench.h"

namespace vmha {

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

struct Program {
  std::string name;
  std::vector<std::string> argv;
};

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// corpus.list: "name | command | ignored files", '#' comments.
bool read_corpus(const std::string& dir, std::vector<Program>* out, std::string* error) {
  std::ifstream f(dir + "/corpus.list");
  if (!f) return *error = dir + "/corpus.list: cannot be read", false;
  std::string line;
  for (int n = 1; std::getline(f, line); ++n) {
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    size_t bar = line.find('|');
    if (bar == std::string::npos)
      return *error = dir + "/corpus.list:" + std::to_string(n) + ": expected 'name | command | files'", false;
    Program p;
    p.name = trim(line.substr(0, bar));
    size_t bar2 = line.find('|', bar + 1);
    std::istringstream cmd(line.substr(bar + 1, bar2 == std::string::npos ? std::string::npos : bar2 - bar - 1));
    for (std::string w; cmd >> w;) p.argv.push_back(w);
    if (p.name.empty() || p.argv.empty() || p.argv[0][0] != '/')
      return *error = dir + "/corpus.list:" + std::to_string(n) + ": expected a name and an absolute command", false;
    out->push_back(std::move(p));
  }
  return true;
}

// A fresh working directory with the corpus's files.
bool fresh(const std::string& from, const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (!fs::create_directory(dir, ec)) return false;
  for (const auto& e : fs::directory_iterator(from, ec))
    if (e.is_regular_file() && e.path().filename() != "corpus.list")
      fs::copy_file(e.path(), dir + "/" + e.path().filename().string(), ec);
  return !ec;
}

// Runs argv in dir, stdout and stderr to /dev/null; wall seconds, or -1 when
// it did not exit 0.
double timed(const std::vector<std::string>& argv, const std::string& dir) {
  auto t0 = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return -1;
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::vector<std::string> in_vmha(const std::vector<std::string>& opts, const std::vector<std::string>& argv) {
  std::vector<std::string> out = {"/proc/self/exe", "run"};
  out.insert(out.end(), opts.begin(), opts.end());
  out.push_back("--");
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

constexpr const char* kModes[] = {"native", "run", "async", "stop-copy"};

}  // namespace

int corpus_bench(const CorpusBenchOptions& o) {
  signal(SIGPIPE, SIG_IGN);
  std::vector<Program> corpus;
  std::string error;
  if (!read_corpus(o.dir, &corpus, &error)) return std::fprintf(stderr, "vmha bench: %s\n", error.c_str()), 1;
  char tmpl[] = "/tmp/vmha-corpus-bench.XXXXXX";
  if (!mkdtemp(tmpl)) return std::perror("vmha bench: mkdtemp"), 1;
  const std::string scratch = tmpl, work = scratch + "/job", key = scratch + "/key", addr_file = scratch + "/addr";
  {
    std::ofstream k(key, std::ios::binary);
    for (int i = 0; i < 32; ++i) k.put(static_cast<char>(std::rand()));
  }
  chmod(key.c_str(), 0600);
  const std::vector<std::string> epoch =
      o.epoch_ms > 0 ? std::vector<std::string>{"--epoch-ms", std::to_string(o.epoch_ms)} : std::vector<std::string>{};
  nlohmann::json rows = nlohmann::json::array();
  std::vector<double> ratios[4];
  if (!o.json)
    std::printf("vmha bench --corpus: median of %d; wall seconds, and slowdown against native\n%-8s %8s | %8s %6s | "
                "%8s %6s | %8s %6s\n",
                o.reps, "program", "native", "run", "x", "async", "x", "stopcopy", "x");
  for (const Program& p : corpus) {
    if (!o.only.empty() && p.name.find(o.only) == std::string::npos) continue;
    std::vector<double> t[4];
    bool failed = false;
    for (int rep = 0; rep < o.reps && !failed; ++rep) {
      for (int m = 0; m < 4 && !failed; ++m) {
        if (!fresh(o.dir, work)) return std::fprintf(stderr, "vmha bench: cannot prepare %s\n", work.c_str()), 1;
        double s;
        if (m == 0) {
          s = timed(p.argv, work);
        } else if (m == 1) {
          s = timed(in_vmha({}, p.argv), work);
        } else {
          std::string addr;
          pid_t backup = start_backup(key, addr_file, &addr, work);
          if (backup < 0) return std::fprintf(stderr, "vmha bench: the backup did not start\n"), 1;
          std::vector<std::string> opts = {"--backup", addr, "--key", key, "--mode", kModes[m]};
          opts.insert(opts.end(), epoch.begin(), epoch.end());
          s = timed(in_vmha(opts, p.argv), work);
          int st = 0;
          waitpid(backup, &st, 0);
        }
        if (s < 0) {
          std::fprintf(stderr, "vmha bench: %s (%s) failed\n", p.name.c_str(), kModes[m]);
          failed = true;
        }
        t[m].push_back(s);
      }
    }
    if (failed) continue;
    nlohmann::json row = {{"program", p.name}};
    const double native = median(t[0]);
    if (!o.json) std::printf("%-8s %8.3f |", p.name.c_str(), native);
    for (int m = 0; m < 4; ++m) {
      row[std::string(kModes[m]) + "_s"] = median(t[m]);
      if (m == 0) continue;
      const double x = median(t[m]) / native;
      ratios[m].push_back(x);
      row[std::string(kModes[m]) + "_x"] = x;
      if (!o.json) std::printf(" %8.3f %5.1fx |", median(t[m]), x);
    }
    if (!o.json) std::printf("\n"), std::fflush(stdout);
    rows.push_back(row);
  }
  nlohmann::json summary;
  for (int m = 1; m < 4; ++m) {
    if (ratios[m].empty()) continue;
    summary[std::string(kModes[m]) + "_median_x"] = median(ratios[m]);
    summary[std::string(kModes[m]) + "_max_x"] = *std::max_element(ratios[m].begin(), ratios[m].end());
  }
  if (o.json) {
    std::printf("%s\n", nlohmann::json{{"programs", rows}, {"summary", summary}}.dump(2).c_str());
  } else if (!ratios[1].empty()) {
    std::printf("over %zu programs: median slowdown run %.1fx, async %.1fx, stop-copy %.1fx; largest %.1fx, %.1fx, "
                "%.1fx\n",
                ratios[1].size(), median(ratios[1]), median(ratios[2]), median(ratios[3]),
                *std::max_element(ratios[1].begin(), ratios[1].end()),
                *std::max_element(ratios[2].begin(), ratios[2].end()),
                *std::max_element(ratios[3].begin(), ratios[3].end()));
  }
  std::error_code ec;
  fs::remove_all(scratch, ec);
  return 0;
}

}  // namespace vmha
