#ifndef EASYPLAN_API_TERMINAL_OUTPUT_H_
#define EASYPLAN_API_TERMINAL_OUTPUT_H_

// What a command shows on a terminal (CommandSpec::terminal): the command declares it beside its run
// and its document (api/command_<name>.cc), and the CLI writes it, the same way for every command
// (cli/run_command.cc): `err` to stderr, then `notes`, then `out` and `files` all or none
// (docs/RELIABILITY.md, "Output safety").

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace easyplan::api {

/// A file a command writes besides its output: suggest's --report page.
struct TerminalFile {
  std::string path;
  std::string_view flag;  ///< "--report": named when it and -o name one file
  std::string text;
};

struct TerminalOutput {
  /// For stderr, first: the findings in the terminal's form (FindingsForTerminal, api/findings_text.h).
  std::string err;
  /// Then these, one diagnostic each ("easyplan: note: nothing fits: no report written to s.html").
  std::vector<Diag> notes;
  /// The artifact, for -o (or stdout). nullopt: nothing is written, not even an empty -o file (a plan
  /// with errors has no export, a cost with no estimate no table).
  std::optional<std::string> out;
  std::vector<TerminalFile> files;
};

}  // namespace easyplan::api

#endif  // EASYPLAN_API_TERMINAL_OUTPUT_H_
