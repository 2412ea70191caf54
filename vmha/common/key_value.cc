#include "vmha/common/key_value.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vmha {

std::string printable(std::string_view text, std::size_t max) {
  std::string out;
  for (unsigned char c : text) {
    if (out.size() >= max) break;
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
    }
  }
  return out;
}

namespace {

bool key_ok(std::string_view k) {
  if (k.empty() || k.size() > 40) return false;
  for (char c : k)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

bool digits(std::string_view v) {
  if (v.empty() || v.size() > 19) return false;  // 19 digits fit in uint64_t
  for (char c : v)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

KeyValueWriter& KeyValueWriter::count(std::string_view key, uint64_t value) {
  text_.append(key).append("=").append(std::to_string(value)).append("\n");
  return *this;
}

KeyValueWriter& KeyValueWriter::decimal(std::string_view key, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", std::isfinite(value) && value > 0 ? value : 0.0);
  text_.append(key).append("=").append(buf).append("\n");
  return *this;
}

KeyValueWriter& KeyValueWriter::flag(std::string_view key, bool value) { return count(key, value ? 1 : 0); }

KeyValueWriter& KeyValueWriter::text(std::string_view key, std::string_view value, std::size_t max) {
  // Control characters become spaces: the value stays on its line, and the
  // reader (which escapes whatever it passes on) shows it as written.
  std::string v(value.substr(0, max));
  for (char& c : v)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  text_.append(key).append("=").append(v).append("\n");
  return *this;
}

Result<KeyValues> KeyValues::parse(std::string_view text) {
  KeyValues kv;
  int number = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++number;
    if (line.empty()) continue;
    const std::string where = "line " + std::to_string(number) + ": ";
    if (kv.lines_.size() >= kMaxLines) return Status::error(where + "more than " + std::to_string(kMaxLines) + " lines");
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos || !key_ok(line.substr(0, eq)))
      return Status::error(where + "expected key=value, got '" + printable(line, 80) + "'");
    std::string key(line.substr(0, eq));
    if (kv.has(key)) return Status::error(where + key + " given twice");
    kv.lines_.push_back(Line{number, key, std::string(line.substr(eq + 1))});
  }
  return kv;
}

bool KeyValues::has(std::string_view key) const {
  for (const Line& l : lines_)
    if (l.key == key) return true;
  return false;
}

KeyValues::Line* KeyValues::find(std::string_view key) {
  for (Line& l : lines_)
    if (l.key == key) {
      l.used = true;
      return &l;
    }
  return nullptr;
}

Status KeyValues::bad(const Line& l, const std::string& expected) {
  return Status::error("line " + std::to_string(l.number) + ": " + l.key + ": expected " + expected + ", got '" +
                       printable(l.value, 40) + "'");
}

Status KeyValues::count(std::string_view key, uint64_t max, uint64_t* out) {
  const Line* l = find(key);
  if (!l) return Status();
  uint64_t n = 0;
  if (digits(l->value)) n = std::strtoull(l->value.c_str(), nullptr, 10);
  if (!digits(l->value) || n > max) return bad(*l, "an integer 0.." + std::to_string(max));
  *out = n;
  return Status();
}

Status KeyValues::decimal(std::string_view key, double max, double* out) {
  const Line* l = find(key);
  if (!l) return Status();
  const std::string& v = l->value;
  const size_t dot = v.find('.');
  bool ok = digits(std::string_view(v).substr(0, dot)) &&
            (dot == std::string::npos || digits(std::string_view(v).substr(dot + 1)));
  const double d = ok ? std::strtod(v.c_str(), nullptr) : -1;
  char range[64];
  std::snprintf(range, sizeof range, "a decimal 0..%.0f", max);
  if (!ok || !(d >= 0 && d <= max)) return bad(*l, range);
  *out = d;
  return Status();
}

Status KeyValues::flag(std::string_view key, bool* out) {
  const Line* l = find(key);
  if (!l) return Status();
  if (l->value != "0" && l->value != "1") return bad(*l, "0 or 1");
  *out = l->value == "1";
  return Status();
}

Status KeyValues::text(std::string_view key, std::size_t max, std::string* out) {
  if (const Line* l = find(key)) *out = printable(l->value, max);
  return Status();
}

Status KeyValues::word(std::string_view key, std::size_t max, std::string* out) {
  const Line* l = find(key);
  if (!l) return Status();
  bool ok = l->value.size() <= max;
  for (char c : l->value)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
                c == '_');
  if (!ok) return bad(*l, "a name (letters, digits, '.', '-', '_')");
  *out = l->value;
  return Status();
}

Status KeyValues::format(std::string_view expected) {
  const Line* l = find("format");
  if (!l) return Status::error("no format= line (expected format=" + std::string(expected) + ")");
  if (l->value != expected) return bad(*l, std::string(expected));
  return Status();
}

Status KeyValues::no_others() const {
  for (const Line& l : lines_)
    if (!l.used) return Status::error("line " + std::to_string(l.number) + ": unknown key '" + l.key + "'");
  return Status();
}

Status read_small_file(int dir_fd, const std::string& name, std::size_t max_bytes, std::string* out) {
  const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Status::error(errno == ELOOP ? "a symlink (not followed)" : std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return Status::error("not a regular file");
  const std::string too_large = "larger than " + std::to_string(max_bytes) + " bytes";
  if (static_cast<std::size_t>(st.st_size) > max_bytes) return Status::error(too_large);
  out->clear();
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::error(std::strerror(errno));
    if (n == 0) return Status();
    out->append(buf, static_cast<std::size_t>(n));
    if (out->size() > max_bytes) return Status::error(too_large);  // it grew since fstat
  }
}

bool missing(const Status& s) { return !s.ok() && s.message() == std::strerror(ENOENT); }

Status write_file_atomically(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status::error(errno_text(tmp));
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status s = Status::error(errno_text(tmp));
      ::close(fd);
      return s;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  if (::close(fd) != 0) return Status::error(errno_text(tmp));
  if (::rename(tmp.c_str(), path.c_str()) != 0) return Status::error(errno_text(path));
  return Status();
}

}  // namespace vmha
