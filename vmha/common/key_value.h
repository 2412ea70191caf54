// Strict `key=value` files: what vmha's programs hand each other as data
// (run_stats.h; the SPANK plugin's task result), never their log lines. The
// files lie in directories the job's user can write, and some are read by
// root: the reader follows no symlink, reads only a small regular file,
// takes each key once, checks every value against its bounds and escapes
// whatever text it passes on.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vmha/common/status.h"

namespace vmha {

// `text` with every byte outside printable ASCII (and the backslash) as
// \xNN, at most `max` bytes: fit for root's logs and a job's AdminComment.
std::string printable(std::string_view text, std::size_t max);

// Builds a file: one `key=value` line per call, in order. Text values have
// their line breaks and other control characters made spaces.
class KeyValueWriter {
 public:
  KeyValueWriter& count(std::string_view key, uint64_t value);
  KeyValueWriter& decimal(std::string_view key, double value);  // 4 decimals
  KeyValueWriter& flag(std::string_view key, bool value);       // 0 or 1
  KeyValueWriter& text(std::string_view key, std::string_view value, std::size_t max = 200);
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

// A parsed file. Every line must be `key=value` with a key of [a-z0-9_]
// (at most 40 bytes), each key at most once, at most kMaxLines lines. The
// getters leave *out alone when the key is absent and fail with "line N:
// KEY: expected ..., got '...'" (escaped) on a value out of its bounds.
class KeyValues {
 public:
  static constexpr std::size_t kMaxLines = 64;
  static Result<KeyValues> parse(std::string_view text);

  bool has(std::string_view key) const;
  // Digits only (no sign, space, exponent or base), at most `max`.
  Status count(std::string_view key, uint64_t max, uint64_t* out);
  // DIGITS[.DIGITS], at most `max`.
  Status decimal(std::string_view key, double max, double* out);
  Status flag(std::string_view key, bool* out);  // 0 or 1
  // Any bytes; *out gets them escaped (printable), at most `max`.
  Status text(std::string_view key, std::size_t max, std::string* out);
  // Letters, digits, '.', '-', '_' only, at most `max` bytes (a node name).
  Status word(std::string_view key, std::size_t max, std::string* out);
  // `format=` must be `expected` (a file of this kind and version).
  Status format(std::string_view expected);
  // Fails on a key no getter asked for: another program's or version's file.
  Status no_others() const;

 private:
  struct Line {
    int number;
    std::string key, value;
    bool used = false;
  };
  Line* find(std::string_view key);
  static Status bad(const Line& l, const std::string& expected);
  std::vector<Line> lines_;
};

// Reads `name` in directory `dir_fd` (AT_FDCWD: a path) without following a
// final symlink or blocking on a FIFO or device. Fails with "a symlink (not
// followed)", "not a regular file", "larger than N bytes" or strerror's text.
Status read_small_file(int dir_fd, const std::string& name, std::size_t max_bytes, std::string* out);
// Whether read_small_file failed only because the file is not there (yet).
bool missing(const Status& s);

// Writes `text` to path.tmp (created 0600, no symlink followed) and renames
// it over `path`: a reader sees the old file or the new one, never a part.
Status write_file_atomically(const std::string& path, std::string_view text);

}  // namespace vmha
