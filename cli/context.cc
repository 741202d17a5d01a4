#include "cli/context.h"

#include <cerrno>
#include <cstring>
#include <ostream>

namespace easyplan::cli {

void PrintDiag(Context& ctx, const Diag& diag) {
  std::string text = diag.ToString();
  if (diag.loc.ToString().empty()) text = "easyplan: " + text;
  ctx.err << text << "\n";
}

int ReportError(Context& ctx, const Status& status) {
  PrintDiag(ctx, status.diag());
  return status.kind() == ErrorKind::kInternal ? kExitInternal : kExitBadInput;
}

Status WriteOutput(Context& ctx, const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    if (!ctx.out) return Status::BadInput({}, "cannot write to standard output: it is closed");
    errno = 0;
    ctx.out << text;
    ctx.out.flush();
    if (ctx.out) return Status();
    // The reader went away (`easyplan resolve X | head`): what it read is all it wanted.
    if (errno == EPIPE) return Status();
    const int error = errno;
    return Status::BadInput({}, "cannot write to standard output" +
                                    (error != 0 ? ": " + std::string(std::strerror(error)) : std::string()));
  }
  return ctx.fs.WriteFileAtomically(path, text);
}

}  // namespace easyplan::cli
