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

Status WriteStdout(Context& ctx, std::string_view text) {
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
      return Status::BadInput({}, std::string(outputs[j].flag) + " and " + std::string(outputs[i].flag) +
                                      " both name " + where + ": give each output its own file");
    }
    if (IsStdout(outputs[i].path)) to_stdout = &outputs[i];
  }
  // Every file in full beside its destination before anything is written anywhere; a failure (stdout's
  // too) leaves every destination as it was: the staged files are removed uncommitted.
  std::vector<std::pair<std::string, std::string_view>> files;
  for (const Output& output : outputs) {
    if (!IsStdout(output.path)) files.emplace_back(output.path, output.text);
  }
  EP_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<StagedFile>> staged, ctx.fs.StageFiles(files));
  if (to_stdout != nullptr) EP_RETURN_IF_ERROR(WriteStdout(ctx, to_stdout->text));
  for (std::unique_ptr<StagedFile>& file : staged) EP_RETURN_IF_ERROR(file->Commit());
  return Status();
}

}  // namespace easyplan::cli
