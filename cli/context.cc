#include "cli/context.h"

#include <cerrno>
#include <cstring>
#include <memory>
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

namespace {

bool IsStdout(const std::string& path) { return path.empty() || path == "-"; }

Status WriteStdout(Context& ctx, const std::string& text) {
  if (!ctx.out) return Status::BadInput({}, "cannot write to standard output: it is closed");
  errno = 0;
  ctx.out << text;
  ctx.out.flush();
  if (ctx.out) return Status();
  // The reader went away (`easyplan resolve X | head`): what it read is all it wanted.
  if (errno == EPIPE) return Status();
  const int error = errno;
  return Status::BadInput(
      {}, "cannot write to standard output" + (error != 0 ? ": " + std::string(std::strerror(error)) : std::string()));
}

}  // namespace

Status WriteOutput(Context& ctx, const std::string& path, const std::string& text) {
  return WriteOutputs(ctx, {{path, "-o", text}});
}

Status WriteOutputs(Context& ctx, const std::vector<Output>& outputs) {
  const Output* to_stdout = nullptr;
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const bool same = IsStdout(outputs[i].path) ? IsStdout(outputs[j].path) : outputs[i].path == outputs[j].path;
      if (!same) continue;
      const std::string where = IsStdout(outputs[i].path) ? "standard output" : "'" + outputs[i].path + "'";
      return Status::BadInput(
          {}, outputs[j].flag + " and " + outputs[i].flag + " both name " + where + ": give each output its own file");
    }
    if (IsStdout(outputs[i].path)) to_stdout = &outputs[i];
  }
  if (to_stdout != nullptr && !ctx.out) return Status::BadInput({}, "cannot write to standard output: it is closed");
  // Every file in full beside its destination before anything is written anywhere; a failure here
  // removes the staged ones (their destructors) and leaves every destination as it was.
  std::vector<std::unique_ptr<StagedFile>> staged;
  for (const Output& output : outputs) {
    if (IsStdout(output.path)) continue;
    EP_ASSIGN_OR_RETURN(std::unique_ptr<StagedFile> file, ctx.fs.StageFile(output.path, output.text));
    staged.push_back(std::move(file));
  }
  if (to_stdout != nullptr) EP_RETURN_IF_ERROR(WriteStdout(ctx, to_stdout->text));
  for (std::unique_ptr<StagedFile>& file : staged) EP_RETURN_IF_ERROR(file->Commit());
  return Status();
}

}  // namespace easyplan::cli
