#include "cli/context.h"

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
    ctx.out << text;
    ctx.out.flush();
    if (!ctx.out) return Status::BadInput({}, "cannot write to standard output");
    return Status();
  }
  return ctx.fs.WriteFileAtomically(path, text);
}

}  // namespace easyplan::cli
