// duet.conf parser: a table of keys, each with a setter that validates.
#include "plugins/seam/duet_conf.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

#include "plugins/seam/file_text.h"
#include "plugins/seam/file_trust.h"
#include "policy/util/printable.h"
#include "policy/util/safe_file.h"
#include "policy/util/text.h"

namespace duet::plugin {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string absolute(const std::string& value, const std::string& file) {
  if (value.empty() || value[0] == '/') return value;
  return dir_of(file) + "/" + value;
}

// A setter stores the value, or returns false and sets *expected to what the
// key takes ("an integer 1..3600").
using Setter = std::function<bool(DuetConf&, const std::string& value, const std::string& file, std::string* expected)>;

bool expect(std::string* expected, std::string what) {
  *expected = std::move(what);
  return false;
}

// Plain decimal only (from_chars: no sign '+', no hex, no spaces, no junk).
bool set_int(int& out, const std::string& v, int lo, int hi, std::string* expected) {
  int x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size() || x < lo || x > hi)
    return expect(expected, "an integer " + std::to_string(lo) + ".." + std::to_string(hi));
  out = x;
  return true;
}

// Decimal notation only: strtod also took hex ("0x1p3"), "inf" and
// leading spaces.
bool set_weight(double& out, const std::string& v, std::string* expected) {
  double x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x, std::chars_format::general);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size() || !std::isfinite(x) || x < 0 || x > 1e6)
    return expect(expected, "a number 0..1000000");
  out = x;
  return true;
}

bool set_choice(std::string& out, const std::string& v, std::initializer_list<const char*> choices,
                std::string* expected) {
  std::string lv = lower(v);
  std::string all;
  for (const char* c : choices) {
    if (lv == c) {
      out = lv;
      return true;
    }
    all += all.empty() ? "" : " | ";
    all += c;
  }
  return expect(expected, "one of " + all);
}

bool set_bool(bool& out, const std::string& v, std::string* expected) {
  std::string lv = lower(v);
  if (lv == "yes" || lv == "true" || lv == "1")
    out = true;
  else if (lv == "no" || lv == "false" || lv == "0")
    out = false;
  else
    return expect(expected, "yes or no");
  return true;
}

bool set_path(std::string& out, const std::string& v, const std::string& file, std::string* expected) {
  if (v.empty()) return expect(expected, "a path");
  out = absolute(v, file);
  return true;
}

bool set_log_level(LogLevel& out, const std::string& v, std::string* expected) {
  std::string s;
  if (!set_choice(s, v, {"quiet", "info", "verbose", "debug"}, expected)) return false;
  out = s == "quiet"     ? LogLevel::kQuiet
        : s == "info"    ? LogLevel::kInfo
        : s == "verbose" ? LogLevel::kVerbose
                         : LogLevel::kDebug;
  return true;
}

struct Key {
  const char* name;
  Setter set;
};

// Each setter gets the value and the file it came from (for paths).
const std::vector<Key>& keys() {
  using Text = const std::string&;
  static const std::vector<Key> table = {
      {"Scorer",
       [](DuetConf& c, Text v, Text, std::string* e) {
         return set_choice(c.scorer, v, {"model", "small-first", "fallback"}, e);
       }},
      {"ModelPath", [](DuetConf& c, Text v, Text f, std::string* e) { return set_path(c.model_path, v, f, e); }},
      {"RescoreInterval",
       [](DuetConf& c, Text v, Text, std::string* e) { return set_int(c.rescore_interval_s, v, 1, 3600, e); }},
      {"FallbackAgeWeight",
       [](DuetConf& c, Text v, Text, std::string* e) { return set_weight(c.fallback_age_weight, v, e); }},
      {"FallbackSizeWeight",
       [](DuetConf& c, Text v, Text, std::string* e) { return set_weight(c.fallback_size_weight, v, e); }},
      {"FallbackMaxAge",
       [](DuetConf& c, Text v, Text, std::string* e) { return set_int(c.fallback_max_age_s, v, 1, 365 * 86400, e); }},
      {"Preemption",
       [](DuetConf& c, Text v, Text, std::string* e) {
         return set_choice(c.preemption, v, {"off", "requeue"}, e);
       }},
      {"PreemptMinRunTime",
       [](DuetConf& c, Text v, Text, std::string* e) { return set_int(c.preempt_min_run_time_s, v, 0, 7 * 86400, e); }},
      {"PreemptJobInterval",
       [](DuetConf& c, Text v, Text, std::string* e) { return set_int(c.preempt_job_interval_s, v, 0, 7 * 86400, e); }},
      {"PreemptMaxRestarts",
       [](DuetConf& c, Text v, Text, std::string* e) { return set_int(c.preempt_max_restarts, v, 1, 1000, e); }},
      {"PreemptMaxPerRescore",
       [](DuetConf& c, Text v, Text, std::string* e) { return set_int(c.preempt_max_per_rescore, v, 1, 1000, e); }},
      {"Ranker",
       [](DuetConf& c, Text v, Text, std::string* e) {
         return set_choice(c.ranker, v, {"model", "prefer-fast", "none"}, e);
       }},
      {"PlacementModelPath",
       [](DuetConf& c, Text v, Text f, std::string* e) { return set_path(c.placement_model_path, v, f, e); }},
      {"NodeSpeedsFile",
       [](DuetConf& c, Text v, Text f, std::string* e) { return set_path(c.node_speeds_file, v, f, e); }},
      {"JobTypeSpeedsFile",
       [](DuetConf& c, Text v, Text f, std::string* e) { return set_path(c.job_type_speeds_file, v, f, e); }},
      {"Observer",
       [](DuetConf& c, Text v, Text, std::string* e) {
         return set_choice(c.observer, v, {"node-stats", "none"}, e);
       }},
      {"Explain", [](DuetConf& c, Text v, Text, std::string* e) { return set_bool(c.explain, v, e); }},
      {"LogLevel", [](DuetConf& c, Text v, Text, std::string* e) { return set_log_level(c.log_level, v, e); }},
  };
  return table;
}

std::string known_keys() {
  std::string all;
  for (const Key& k : keys()) all += (all.empty() ? "" : ", ") + std::string(k.name);
  return all;
}

// A comment starts at a '#' at the start of the line or after a space or
// tab; any other '#' belongs to the value ("ModelPath=/srv/a#1/m").
std::string_view strip_comment(std::string_view line) {
  for (size_t h = line.find('#'); h != line.npos; h = line.find('#', h + 1))
    if (h == 0 || line[h - 1] == ' ' || line[h - 1] == '\t') return line.substr(0, h);
  return line;
}

// Where the line holds a NUL or other control byte (npos: nowhere). Such a
// byte would cut the value short where it is used (a path) or hide text:
// the line is refused.
size_t control_byte(std::string_view line) {
  auto bad = std::find_if(line.begin(), line.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t' && c != '\r') || u == 0x7f;
  });
  return bad == line.end() ? line.npos : static_cast<size_t>(bad - line.begin());
}

struct Where {
  const std::string& file;
  int line;
};

// One line's "Key = Value" (comment stripped) into r.conf; what is wrong
// with it into r.errors. `seen` marks the keys given so far.
void parse_setting(std::string_view line, Where at, std::vector<bool>& seen, ConfResult& r) {
  auto add = [&](size_t col, std::string msg) {
    r.errors.push_back({at.file, at.line, static_cast<int>(col) + 1, std::move(msg)});
  };
  size_t b = 0;
  while (b < line.size() && is_space(line[b])) ++b;
  size_t e = line.size();
  while (e > b && is_space(line[e - 1])) --e;
  if (b == e) return;
  std::string_view body = line.substr(b, e - b);
  size_t eq = body.find('=');
  if (eq == body.npos) return add(b, "expected Key=Value, got '" + std::string(body) + "'");
  std::string_view key = body.substr(0, eq);
  while (!key.empty() && is_space(key.back())) key.remove_suffix(1);
  size_t vb = eq + 1;
  while (vb < body.size() && is_space(body[vb])) ++vb;
  std::string value(body.substr(vb));
  auto it = std::find_if(keys().begin(), keys().end(), [&](const Key& k) { return iequal(k.name, key); });
  if (it == keys().end()) return add(b, "unknown key '" + std::string(key) + "' (known keys: " + known_keys() + ")");
  size_t idx = static_cast<size_t>(it - keys().begin());
  if (seen[idx]) add(b, std::string("key ") + it->name + " given twice (the last wins)");
  seen[idx] = true;
  r.key_lines[it->name] = at.line;
  std::string expected;
  if (!it->set(r.conf, value, at.file, &expected))
    add(b + vb, std::string(it->name) + ": expected " + expected + ", got '" + value + "' (default kept)");
}

}  // namespace

std::string ConfError::text() const {
  // Messages quote the file's text: no terminal escapes into slurmctld's log.
  return printable(file) + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + printable(message);
}

std::string to_string(LogLevel level) {
  switch (level) {
    case LogLevel::kQuiet:
      return "quiet";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kVerbose:
      return "verbose";
    case LogLevel::kDebug:
      return "debug";
  }
  return "info";
}

ConfResult parse_duet_conf(std::string_view text, const std::string& file) {
  ConfResult r;
  r.path = file;
  r.file_found = true;
  std::vector<bool> seen(keys().size(), false);
  int lineno = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++lineno;
    line = strip_comment(line);
    if (size_t bad = control_byte(line); bad != line.npos) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(static_cast<unsigned char>(line[bad])));
      r.errors.push_back({file, lineno, static_cast<int>(bad) + 1,
                          std::string("control character ") + hex + " in the line (line ignored)"});
      continue;
    }
    parse_setting(line, {file, lineno}, seen, r);
  }
  if (r.conf.model_path.empty()) r.conf.model_path = absolute("duet-ordering.model", file);
  if (r.conf.placement_model_path.empty()) r.conf.placement_model_path = absolute("duet-placement.model", file);
  return r;
}

ConfResult load_duet_conf(const std::string& path, std::optional<std::uint32_t> trusted_uid) {
  auto defaults = [&](bool found, std::string why) {
    ConfResult r = parse_duet_conf("", path);
    r.file_found = found;
    r.conf.trusted_uid = trusted_uid;
    if (!why.empty()) r.errors.push_back({path, 0, 0, std::move(why)});
    return r;
  };
  std::string text;
  try {
    text = read_regular_file(path, kMaxDuetConfBytes, "duet.conf");
  } catch (const FileError& e) {
    if (e.error_number() == ENOENT) return defaults(false, "");
    return defaults(true, e.reason() + " (all defaults)");
  }
  if (std::string why; trusted_uid && !file_trusted(path, *trusted_uid, &why))
    return defaults(true, "refused: " + why + " (all defaults)");
  ConfResult r = parse_duet_conf(text, path);
  r.conf.trusted_uid = trusted_uid;
  return r;
}

std::string duet_conf_path_for(const std::string& slurm_conf_path) { return dir_of(slurm_conf_path) + "/duet.conf"; }

}  // namespace duet::plugin
