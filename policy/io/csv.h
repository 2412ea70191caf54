// A strict CSV reader: every error names file, line, column and what was
// expected. Fields may be double-quoted ("a,b", "" for a quote). Blank lines
// are ignored. No silent skips.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace duet {

// Bad input: "FILE:LINE:COL: MESSAGE". Line and column are 1-based; 0 = unknown.
// File and message are made printable (policy/util/printable.h): messages
// quote input, which must not bring terminal escapes into a log.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, int column, const std::string& message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  std::string file_;
  int line_, column_;
};

struct CsvField {
  std::string text;
  int column = 1;  // 1-based character column where the field starts
};

class CsvReader {
 public:
  // `name` is used in messages (usually the path).
  CsvReader(std::istream& in, std::string name);
  // Opens `path` (a regular file of at most kMaxCsvFileBytes, opened
  // non-blocking: policy/util/safe_file.h); throws InputError if it cannot.
  static std::unique_ptr<std::istream> open(const std::string& path);

  // Reads the next non-blank record; false at end of input. A line longer
  // than kMaxCsvLineBytes or a field longer than kMaxCsvFieldBytes
  // (policy/io/limits.h) is an InputError, found without holding more.
  bool next();
  const std::vector<CsvField>& fields() const { return fields_; }
  int line() const { return line_; }
  const std::string& name() const { return name_; }

  // Throws InputError at field i (or at the line when i is out of range).
  [[noreturn]] void fail(size_t i, const std::string& message) const;
  // Checks the record has between min and max fields.
  void expect_fields(size_t min, size_t max) const;

  // Typed field access with errors that say what was expected.
  const std::string& text(size_t i, std::string_view what) const;
  double number(size_t i, std::string_view what) const;        // finite
  double non_negative(size_t i, std::string_view what) const;  // >= 0
  // lo <= v <= hi; `unit` is added to the message ("seconds (10 years)").
  double in_range(size_t i, std::string_view what, double lo, double hi, std::string_view unit = {}) const;
  // A duration or time in seconds: 0..kMaxTraceSeconds (policy/io/limits.h).
  double seconds(size_t i, std::string_view what) const;
  int64_t integer(size_t i, std::string_view what) const;
  int64_t positive_integer(size_t i, std::string_view what) const;  // >= 1

 private:
  bool read_line();
  std::istream& in_;
  std::string name_;
  std::string buf_;
  std::vector<CsvField> fields_;
  int line_ = 0;
};

// Header handling: maps column names to indices.
struct CsvHeader {
  std::vector<std::string> names;
  // Index of `name`, or -1.
  int find(std::string_view name) const;
};
// Reads the header line; checks every `required` name is present and every
// name is in `required` or `optional`; no duplicates.
CsvHeader read_header(CsvReader& r, const std::vector<std::string_view>& required,
                      const std::vector<std::string_view>& optional);

// Quotes a field for output if needed.
std::string csv_escape(std::string_view s);

}  // namespace duet
