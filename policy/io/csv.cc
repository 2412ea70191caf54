#include "policy/io/csv.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "policy/io/limits.h"
#include "policy/util/printable.h"
#include "policy/util/safe_file.h"

namespace duet {

// The shortest text that reads back as v ("0.001", "315360000"). Plain
// <charconv>: the plugins link this reader, and they stay free of fmt.
static std::string shortest(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

static std::string where(const std::string& file, int line, int column) {
  std::string s = printable(file);
  if (line > 0) s += ":" + std::to_string(line);
  if (column > 0) s += ":" + std::to_string(column);
  return s;
}

InputError::InputError(std::string file, int line, int column, const std::string& message)
    : std::runtime_error(where(file, line, column) + ": " + printable(message)),
      file_(std::move(file)),
      line_(line),
      column_(column) {}

CsvReader::CsvReader(std::istream& in, std::string name) : in_(in), name_(std::move(name)) {}

std::unique_ptr<std::istream> CsvReader::open(const std::string& path) {
  try {
    return std::make_unique<FileInput>(path, kMaxCsvFileBytes, "CSV file");
  } catch (const FileError& e) { throw InputError(path, 0, 0, e.reason()); }
}

// One line into buf_, without its '\n'; false at the end of input. Reads
// byte by byte from the stream buffer so that no more than the limit is
// ever held (std::getline would take a 1 GiB line whole).
bool CsvReader::read_line() {
  buf_.clear();
  std::streambuf* sb = in_.rdbuf();
  if (!sb) return false;
  for (bool any = false;; any = true) {
    const auto c = sb->sbumpc();
    if (c == std::streambuf::traits_type::eof()) {
      in_.setstate(std::ios::eofbit);
      return any;
    }
    if (c == '\n') return true;
    if (buf_.size() >= kMaxCsvLineBytes)
      throw InputError(name_, line_ + 1, 0, "line longer than " + std::to_string(kMaxCsvLineBytes) + " bytes");
    buf_ += static_cast<char>(c);
  }
}

bool CsvReader::next() {
  while (read_line()) {
    ++line_;
    if (!buf_.empty() && buf_.back() == '\r') buf_.pop_back();
    if (line_ == 1 && buf_.size() >= 3 && buf_.compare(0, 3, "\xEF\xBB\xBF") == 0) buf_.erase(0, 3);
    if (buf_.find_first_not_of(" \t") == std::string::npos) continue;  // blank line
    fields_.clear();
    size_t i = 0, n = buf_.size();
    for (;;) {
      CsvField f;
      f.column = static_cast<int>(i) + 1;
      if (i < n && buf_[i] == '"') {
        ++i;
        for (;;) {
          if (i >= n) throw InputError(name_, line_, f.column, "unterminated quoted field");
          if (buf_[i] == '"') {
            if (i + 1 < n && buf_[i + 1] == '"') {
              f.text += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          f.text += buf_[i++];
        }
        if (i < n && buf_[i] != ',')
          throw InputError(name_, line_, static_cast<int>(i) + 1, "expected ',' after quoted field");
      } else {
        size_t e = buf_.find(',', i);
        if (e == std::string::npos) e = n;
        f.text.assign(buf_, i, e - i);
        if (f.text.find('"') != std::string::npos)
          throw InputError(name_, line_, f.column, "unexpected '\"' inside unquoted field");
        i = e;
      }
      if (f.text.size() > kMaxCsvFieldBytes)
        throw InputError(name_, line_, f.column, "field longer than " + std::to_string(kMaxCsvFieldBytes) + " bytes");
      fields_.push_back(std::move(f));
      if (i >= n) break;
      ++i;  // skip ','
      if (i == n) {
        fields_.push_back(CsvField{"", static_cast<int>(i) + 1});
        break;
      }
    }
    return true;
  }
  return false;
}

void CsvReader::fail(size_t i, const std::string& message) const {
  int col = i < fields_.size() ? fields_[i].column : 0;
  throw InputError(name_, line_, col, message);
}

void CsvReader::expect_fields(size_t min, size_t max) const {
  size_t n = fields_.size();
  if (n >= min && n <= max) return;
  std::string want = min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max);
  throw InputError(name_, line_, n > max ? fields_[max].column : 0,
                   "expected " + want + " fields, got " + std::to_string(n));
}

const std::string& CsvReader::text(size_t i, std::string_view what) const {
  if (i >= fields_.size()) fail(i, "missing field '" + std::string(what) + "'");
  return fields_[i].text;
}

static std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

double CsvReader::number(size_t i, std::string_view what) const {
  std::string t = trimmed(text(i, what));
  double v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size() || !std::isfinite(v))
    fail(i, "field '" + std::string(what) + "': expected a number, got '" + t + "'");
  return v;
}

double CsvReader::non_negative(size_t i, std::string_view what) const {
  double v = number(i, what);
  if (v < 0)
    fail(i, "field '" + std::string(what) + "': expected a number >= 0, got '" + trimmed(fields_[i].text) + "'");
  return v;
}

double CsvReader::in_range(size_t i, std::string_view what, double lo, double hi, std::string_view unit) const {
  double v = number(i, what);
  if (v < lo || v > hi)
    fail(i, "field '" + std::string(what) + "': expected a number from " + shortest(lo) + " to " + shortest(hi) +
                (unit.empty() ? "" : " ") + std::string(unit) + ", got '" + trimmed(fields_[i].text) + "'");
  return v;
}

double CsvReader::seconds(size_t i, std::string_view what) const {
  return in_range(i, what, 0, kMaxTraceSeconds, "seconds (10 years)");
}

int64_t CsvReader::integer(size_t i, std::string_view what) const {
  std::string t = trimmed(text(i, what));
  int64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size()) {
    // Accept integral values written as decimals ("8.0"), as real traces do.
    double d = 0;
    auto [q, ec2] = std::from_chars(t.data(), t.data() + t.size(), d);
    if (t.empty() || ec2 != std::errc() || q != t.data() + t.size() || d != std::floor(d) || std::fabs(d) > 9e15)
      fail(i, "field '" + std::string(what) + "': expected an integer, got '" + t + "'");
    v = static_cast<int64_t>(d);
  }
  return v;
}

int64_t CsvReader::positive_integer(size_t i, std::string_view what) const {
  int64_t v = integer(i, what);
  if (v < 1)
    fail(i, "field '" + std::string(what) + "': expected an integer >= 1, got '" + trimmed(fields_[i].text) + "'");
  return v;
}

int CsvHeader::find(std::string_view name) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i);
  return -1;
}

CsvHeader read_header(CsvReader& r, const std::vector<std::string_view>& required,
                      const std::vector<std::string_view>& optional) {
  auto list = [](const std::vector<std::string_view>& v) {
    std::string s;
    for (auto x : v) s += (s.empty() ? "" : ",") + std::string(x);
    return s;
  };
  if (!r.next()) throw InputError(r.name(), 1, 0, "empty file: expected a header line '" + list(required) + "'");
  CsvHeader h;
  for (size_t i = 0; i < r.fields().size(); ++i) {
    std::string n = trimmed(r.fields()[i].text);
    bool known = false;
    for (auto x : required) known |= x == n;
    for (auto x : optional) known |= x == n;
    if (!known)
      r.fail(i, "unknown column '" + n + "' in header; expected " + list(required) +
                    (optional.empty() ? "" : " and optionally " + list(optional)));
    if (h.find(n) >= 0) r.fail(i, "duplicate column '" + n + "' in header");
    h.names.push_back(n);
  }
  for (auto x : required)
    if (h.find(x) < 0)
      throw InputError(r.name(), r.line(), 0,
                       "header lacks required column '" + std::string(x) + "' (required: " + list(required) + ")");
  return h;
}

std::string csv_escape(std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

}  // namespace duet
