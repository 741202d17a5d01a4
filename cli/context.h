#ifndef EASYPLAN_CLI_CONTEXT_H_
#define EASYPLAN_CLI_CONTEXT_H_

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "core/file_system.h"
#include "core/limits.h"
#include "core/status.h"

namespace easyplan::cli {

/// Everything a subcommand may touch, passed by reference (no globals): the file system, the
/// streams, and the options shared by every subcommand.
struct Context {
  FileSystem& fs;
  std::istream& in;
  std::ostream& out;        // only the requested artifact
  std::ostream& err;        // diagnostics
  std::string schemas_dir;  // "" = the embedded data files
  Limits limits;            // --max-input-bytes, --max-depth, --max-values (global flags)
  bool verbose = false;     // --verbose: also the notes a user cannot act on (api::FindingsForTerminal)
};

/// Exit codes of every subcommand.
enum ExitCode { kExitOk = 0, kExitFindings = 1, kExitBadInput = 2, kExitInternal = 3 };

/// Prints a diagnostic to ctx.err, one line plus its notes.
void PrintDiag(Context& ctx, const Diag& diag);

/// Prints a failed Status and returns its exit code (2 for bad input, 3 for internal errors).
int ReportError(Context& ctx, const Status& status);

/// Writes `text` to stdout, or atomically to `path` (temp + rename) when it is not empty. A reader
/// that goes away early (`easyplan ... | head`: EPIPE) is not an error: the rest of the output is
/// dropped quietly and the command still succeeds (main() ignores SIGPIPE; docs/RELIABILITY.md, "Output safety").
Status WriteOutput(Context& ctx, const std::string& path, const std::string& text);

/// One output of a command: where it goes ("" or "-": stdout), what flag named it, and its text.
/// The text is viewed, not copied: it lives in the caller until WriteOutputs returns.
struct Output {
  std::string path;
  std::string_view flag;  ///< "-o", "--report": named when two outputs are one file
  std::string_view text;
};

/// Writes every output or none (docs/RELIABILITY.md, "Output safety"): the files are staged in full
/// beside their destinations first (FileSystem::StageFile), then stdout is written, then the files are
/// put in place. A destination that cannot be written leaves the others as they were, and two outputs
/// naming one file are refused.
Status WriteOutputs(Context& ctx, const std::vector<Output>& outputs);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_CONTEXT_H_
