#include "plugins/spank/lib/ha_settings.h"

#include <charconv>

#ifndef VMHA_SPANK_BINDIR
#define VMHA_SPANK_BINDIR "/usr/local/bin"
#endif
#ifndef VMHA_SPANK_LIBEXECDIR
#define VMHA_SPANK_LIBEXECDIR "/usr/local/libexec/duet"
#endif

namespace vmha_spank {

std::string default_vmha_path() { return VMHA_SPANK_BINDIR "/vmha"; }
std::string default_task_path() { return VMHA_SPANK_LIBEXECDIR "/vmha-task"; }

namespace {

bool parse_int(const std::string& text, long lo, long hi, long* out) {
  long v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// ro=: "" or absolute paths, each without `.` or `..` components (vmha
// refuses those as read-only roots), separated by ':' (empty entries allowed).
bool valid_path_list(const std::string& v) {
  size_t start = 0;
  while (start <= v.size()) {
    size_t colon = v.find(':', start);
    if (colon == std::string::npos) colon = v.size();
    std::string p = v.substr(start, colon - start);
    if (!p.empty()) {
      if (p[0] != '/') return false;
      std::string padded = p + "/";
      if (padded.find("/./") != std::string::npos || padded.find("/../") != std::string::npos) return false;
    }
    start = colon + 1;
  }
  return true;
}

struct Key {
  const char* name;
  const char* expected;
  bool (*set)(const std::string& v, HaSettings* s);
};

std::string range(int lo, int hi) { return std::to_string(lo) + "-" + std::to_string(hi); }
// The argument table's texts are literals: they must say vmha/common/settings.h's ranges.
static_assert(vmha::kMinEpochMs == 1 && vmha::kMaxEpochMs == 60000, "update the epoch= text");
static_assert(vmha::kMinLeaseMs == 50 && vmha::kMaxLeaseMs == 60000, "update the lease= text");

bool set_int(const std::string& v, long lo, long hi, int* field) {
  long x;
  if (!parse_int(v, lo, hi, &x)) return false;
  *field = static_cast<int>(x);
  return true;
}

const Key kKeys[] = {
    {"epoch", "an epoch length in milliseconds, 1-60000",
     [](const std::string& v, HaSettings* s) {
       return set_int(v, vmha::kMinEpochMs, vmha::kMaxEpochMs, &s->epoch_ms);
     }},
    {"mode", "async or stop-copy",
     [](const std::string& v, HaSettings* s) {
       if (v != "async" && v != "stop-copy") return false;
       s->mode = v;
       return true;
     }},
    {"lease", "a lease in milliseconds, 50-60000",
     [](const std::string& v, HaSettings* s) {
       return set_int(v, vmha::kMinLeaseMs, vmha::kMaxLeaseMs, &s->lease_ms);
     }},
    {"on_loss", "stop or continue",
     [](const std::string& v, HaSettings* s) {
       if (v != "stop" && v != "continue") return false;
       s->on_loss = v;
       return true;
     }},
    {"memory", "guest memory in MiB, 16-65536",
     [](const std::string& v, HaSettings* s) {
       long x;
       if (!parse_int(v, 16, 65536, &x)) return false;
       s->memory_mib = static_cast<uint64_t>(x);
       return true;
     }},
    {"backup", "next or last (the node of the allocation that holds a task's backup)",
     [](const std::string& v, HaSettings* s) {
       if (v != "next" && v != "last") return false;
       s->backup = v;
       return true;
     }},
    {"statedir", "an absolute directory",
     [](const std::string& v, HaSettings* s) {
       if (v.empty() || v[0] != '/' || v.find('%') != std::string::npos) return false;
       s->statedir = v;
       return true;
     }},
    {"vmha", "the absolute path of the vmha command",
     [](const std::string& v, HaSettings* s) {
       if (v.empty() || v[0] != '/') return false;
       s->vmha = v;
       return true;
     }},
    {"task", "the absolute path of vmha-task",
     [](const std::string& v, HaSettings* s) {
       if (v.empty() || v[0] != '/') return false;
       s->task = v;
       return true;
     }},
    {"transports", "a UCX_TLS list, e.g. tcp or sm,self",
     [](const std::string& v, HaSettings* s) {
       s->transports = v;
       return true;
     }},
    {"srun_args", "extra srun arguments, separated by commas",
     [](const std::string& v, HaSettings* s) {
       s->srun_args = v;
       return true;
     }},
    {"ro", "absolute paths separated by ':' (no '.' or '..' components), or nothing",
     [](const std::string& v, HaSettings* s) {
       if (!valid_path_list(v)) return false;
       s->ro = v;
       return true;
     }},
};

std::string env_name(const char* key) {
  std::string n = kEnvPrefix;
  for (const char* p = key; *p; ++p) n += static_cast<char>(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
  return n;
}

std::string value_of(const HaSettings& s, const std::string& key) {
  if (key == "epoch") return std::to_string(s.epoch_ms);
  if (key == "mode") return s.mode;
  if (key == "lease") return std::to_string(s.lease_ms);
  if (key == "on_loss") return s.on_loss;
  if (key == "memory") return std::to_string(s.memory_mib);
  if (key == "backup") return s.backup;
  if (key == "statedir") return s.statedir;
  if (key == "vmha") return s.vmha;
  if (key == "task") return s.task;
  if (key == "transports") return s.transports;
  if (key == "ro") return s.ro;
  return s.srun_args;
}

}  // namespace

bool apply_plugstack_arg(const std::string& arg, HaSettings* s, std::string* error) {
  auto eq = arg.find('=');
  if (eq == std::string::npos) {
    *error =
        "expected key=value (keys: epoch, mode, lease, on_loss, memory, backup, statedir, vmha, task, transports, "
        "srun_args, ro)";
    return false;
  }
  std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
  for (const Key& k : kKeys) {
    if (key != k.name) continue;
    if (k.set(value, s)) return true;
    *error = key + ": expected " + k.expected + ", got '" + value + "'";
    return false;
  }
  *error = "unknown key '" + key +
           "' (keys: epoch, mode, lease, on_loss, memory, backup, statedir, vmha, task, transports, srun_args, ro)";
  return false;
}

bool apply_plugstack_args(int argc, char** argv, HaSettings* s, std::string* error) {
  for (int i = 0; i < argc; ++i) {
    std::string e;
    if (!apply_plugstack_arg(argv[i], s, &e)) {
      *error = "argument " + std::to_string(i + 1) + " '" + argv[i] + "': " + e;
      return false;
    }
  }
  return true;
}

bool parse_ha_value(const char* value, HaSource from, bool* on, int* epoch_ms, std::string* error) {
  std::string v = value ? value : "";
  *epoch_ms = 0;
  if (v.empty() || v == "yes" || v == "on" || v == "true") {
    *on = true;
    return true;
  }
  if (v == "no" || v == "off" || v == "false" || v == "0") {
    if (from == HaSource::kOption) {
      // An option that reads as "protect" must not quietly mean the opposite.
      *error = "expected an epoch length in milliseconds (" + range(vmha::kMinEpochMs, vmha::kMaxEpochMs) +
               "), or nothing for the site default; got '" + v + "' (to run unprotected, leave out --ha)";
      return false;
    }
    *on = false;
    return true;
  }
  long x;
  if (parse_int(v, vmha::kMinEpochMs, vmha::kMaxEpochMs, &x)) {
    *on = true;
    *epoch_ms = static_cast<int>(x);
    return true;
  }
  *error = "expected an epoch length in milliseconds (" + range(vmha::kMinEpochMs, vmha::kMaxEpochMs) +
           "), or nothing for the site default; got '" + v + "'";
  return false;
}

std::vector<std::string> read_only_options(const HaSettings& s) {
  std::vector<std::string> out = {"--no-default-ro"};
  size_t start = 0;
  while (start <= s.ro.size()) {
    size_t colon = s.ro.find(':', start);
    if (colon == std::string::npos) colon = s.ro.size();
    if (colon > start) out.insert(out.end(), {"--ro", s.ro.substr(start, colon - start)});
    start = colon + 1;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> task_environment(const HaSettings& s) {
  std::vector<std::pair<std::string, std::string>> env;
  for (const Key& k : kKeys) env.emplace_back(env_name(k.name), value_of(s, k.name));
  return env;
}

bool settings_from_environment(const std::function<const char*(const char*)>& get, HaSettings* s, std::string* error) {
  for (const Key& k : kKeys) {
    std::string name = env_name(k.name);
    const char* v = get(name.c_str());
    if (!v) {
      *error = name + " is not set (vmha-task runs only as a task of an --ha job step)";
      return false;
    }
    if (!k.set(v, s)) {
      *error = name + ": expected " + k.expected + ", got '" + v + "'";
      return false;
    }
  }
  return true;
}

}  // namespace vmha_spank
