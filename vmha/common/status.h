// Status and Result<T>: vmha's expected failures (a host call that failed, a
// malformed ELF, checkpoint or frame, a lost peer), returned instead of thrown
// by every layer from the VMM to the replication seams, each with a message
// for the operator (vmha/README.md, "Errors").
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace vmha {

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  static Status error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !failed_; }
  const std::string& message() const { return message_; }

  // Prefixes context ("backup 10.0.0.1:7000: ") to an error; success stays success.
  Status context(const std::string& prefix) const { return ok() ? *this : Status(prefix + message_); }

 private:
  explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}
  bool failed_ = false;
  std::string message_;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit on purpose
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = Status::error("internal error: Result built from a success Status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T take() { return std::move(*value_); }

 private:
  std::optional<T> value_;
  Status status_;
};

// Error text for a failed host call: "what: strerror(errno)".
std::string errno_text(const std::string& what);

}  // namespace vmha
