#include "core/status.h"

#include <cstdio>

#include "core/terminal_text.h"

namespace easyplan {

std::string SourceLoc::ToString() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  return out;
}

std::string Diag::ToString() const {
  std::string out = loc.ToString();
  if (!out.empty()) out += ": ";
  switch (severity) {
    case Severity::kNote:
      out += "note: ";
      break;
    case Severity::kWarning:
      out += "warning: ";
      break;
    case Severity::kError:
      out += "error: ";
      break;
  }
  if (!loc.pointer.empty()) out += loc.pointer + ": ";
  out += message;
  for (const std::string& note : notes) out += "\n  note: " + note;
  return out;
}

Status Status::Error(Diag diag, ErrorKind kind) {
  Status status;
  diag.severity = Severity::kError;
  status.diag_ = std::move(diag);
  status.kind_ = kind;
  return status;
}

Status Status::BadInput(SourceLoc loc, std::string message, std::vector<std::string> notes) {
  return Error(Diag{Severity::kError, std::move(loc), std::move(message), std::move(notes)});
}

Status Status::Internal(std::string message) {
  return Error(Diag{Severity::kError, {}, "internal error: " + std::move(message), {}}, ErrorKind::kInternal);
}

const Diag& Status::diag() const {
  EP_CHECK(diag_.has_value(), "diag() on an ok Status");
  return *diag_;
}

Diag& Status::mutable_diag() {
  EP_CHECK(diag_.has_value(), "mutable_diag() on an ok Status");
  return *diag_;
}

std::string Status::ToString() const { return ok() ? "ok" : diag_->ToString(); }

namespace internal {
void CheckFailed(const char* condition, const char* file, int line, const std::string& msg) {
  // Printed before abort(), past cli/main.cc's filter of stderr, so escaped here (core/terminal_text.h).
  std::fprintf(stderr, "easyplan: internal error: %s:%d: check failed: %s: %s\n", file, line, condition,
               EscapeForTerminal(msg).c_str());
  std::abort();
}
}  // namespace internal

}  // namespace easyplan
