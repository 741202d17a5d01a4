#ifndef EASYPLAN_CORE_STATUS_H_
#define EASYPLAN_CORE_STATUS_H_

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace easyplan {

/// Where a diagnostic points: a file, and inside it a JSON pointer and/or a 1-based line:column.
/// Every field is optional; `ToString()` prints what is known, ninja style (`file:line:col`).
struct SourceLoc {
  std::string file;     ///< path as the user spelled it, or "<stdin>", "<set>", "<builtin>/..."
  std::string pointer;  ///< RFC 6901 JSON pointer ("/rope_scaling/factor"); empty = whole document
  int line = 0;         ///< 1-based; 0 = unknown
  int column = 0;       ///< 1-based; 0 = unknown

  /// "config.json:12:5" or "config.json" or "" (never a trailing colon).
  std::string ToString() const;
};

enum class Severity { kNote, kWarning, kError };

/// One user-facing message: "file:line:col: error: /key: message" plus indented notes.
struct Diag {
  Severity severity = Severity::kError;
  SourceLoc loc;
  std::string message;
  std::vector<std::string> notes;

  std::string ToString() const;
};

/// What went wrong, which decides the exit code (2 for bad input, 3 for internal errors).
enum class ErrorKind { kBadInput, kInternal };

/// Success, or a user-facing diagnostic. Cheap to move; `[[nodiscard]]` everywhere it is returned.
class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Error(Diag diag, ErrorKind kind = ErrorKind::kBadInput);
  static Status BadInput(SourceLoc loc, std::string message, std::vector<std::string> notes = {});
  static Status Internal(std::string message);

  bool ok() const { return !diag_.has_value(); }
  ErrorKind kind() const { return kind_; }
  /// REQUIRES: !ok().
  const Diag& diag() const;
  Diag& mutable_diag();
  std::string ToString() const;

 private:
  std::optional<Diag> diag_;
  ErrorKind kind_ = ErrorKind::kBadInput;
};

/// A value or a Status explaining why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}        // NOLINT: implicit by design
  StatusOr(Status status) : value_(std::move(status)) {  // NOLINT: implicit by design
    if (std::get<Status>(value_).ok()) std::abort();     // an ok Status carries no value
  }

  bool ok() const { return std::holds_alternative<T>(value_); }
  Status status() const { return ok() ? Status() : std::get<Status>(value_); }
  /// REQUIRES: ok().
  const T& value() const& { return std::get<T>(value_); }
  T& value() & { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Status> value_;
};

namespace internal {
[[noreturn]] void CheckFailed(const char* condition, const char* file, int line, const std::string& msg);
}  // namespace internal

}  // namespace easyplan

#define EP_STATUS_CONCAT_INNER(a, b) a##b
#define EP_STATUS_CONCAT(a, b) EP_STATUS_CONCAT_INNER(a, b)

/// Returns the Status from the enclosing function when `expr` is not ok.
#define EP_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::easyplan::Status ep_status_ = (expr);  \
    if (!ep_status_.ok()) return ep_status_; \
  } while (false)

#define EP_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

/// `EP_ASSIGN_OR_RETURN(auto x, F());` unwraps a StatusOr or returns its Status.
#define EP_ASSIGN_OR_RETURN(lhs, expr) EP_ASSIGN_OR_RETURN_IMPL(EP_STATUS_CONCAT(ep_statusor_, __LINE__), lhs, expr)

/// Invariant check: a violated invariant is a bug, so it aborts with file:line (never for user input).
#define EP_CHECK(cond, msg)                                                           \
  do {                                                                                \
    if (!(cond)) ::easyplan::internal::CheckFailed(#cond, __FILE__, __LINE__, (msg)); \
  } while (false)

#endif  // EASYPLAN_CORE_STATUS_H_
