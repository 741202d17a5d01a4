// `easyplan suggest CONFIG --devices N --hardware H --mode M --batch B --seq S`: every mesh, checkpoint
// policy and microbatch count that EasyDeL accepts and that fits, ranked by step time (docs/COST.md).
// Exit 1 when nothing fits.
#include <filesystem>
#include <string>

#include "api/commands.h"
#include "api/findings_text.h"
#include "api/suggest_text.h"
#include "core/emit.h"

namespace easyplan::api {
namespace {

/// Whether --report and -o write one destination: both standard output ("" and "-" for -o, "-" for
/// --report), or the same path as written (compared lexically: the file system is not consulted).
bool ReportSharesOutput(const std::string& report, const std::string& output) {
  if (report.empty()) return false;
  const bool output_is_stdout = output.empty() || output == "-";
  if (report == "-" || output_is_stdout) return report == "-" && output_is_stdout;
  return std::filesystem::path(report).lexically_normal() == std::filesystem::path(output).lexically_normal();
}

/// The command's checks, and one of its own: the page and the table (or JSON) each need their own file,
/// else the second write replaces the first and the run still succeeds.
StatusOr<std::any> CheckSuggestCommand(const CommandOptions& options) {
  EP_ASSIGN_OR_RETURN(std::any checked, CheckedPipeline(options.Suggest()));
  if (ReportSharesOutput(options.report, options.output)) {
    const bool to_stdout = options.report == "-";
    return Status::BadInput(
        {},
        to_stdout ? "--report - writes the page to standard output, where the table (or JSON) goes too"
                  : "--report and -o both name '" + options.report + "': the page would replace the table (or JSON)",
        {to_stdout ? "write one of them to a file: -o FILE or --report FILE" : "give the page its own file"});
  }
  return checked;
}

std::string SuggestDocument(const CommandResult& result, const CommandOptions&) {
  const SuggestValue& value = std::get<SuggestValue>(result.value);
  return EmitJson(SuggestToJson(value.options, value.result));
}

// --report's page, made by the run when something fits.
std::vector<std::pair<std::string, std::string>> SuggestFiles(const CommandResult& result,
                                                              const CommandOptions& options) {
  std::vector<std::pair<std::string, std::string>> files;
  const SuggestValue& value = std::get<SuggestValue>(result.value);
  if (!options.report.empty() && value.page) files.emplace_back(options.report, *value.page);
  return files;
}

// The ranking (or JSON), and --report's page beside it; with nothing that fits, a note that no page was
// written. Both files or neither: `-o BAD/s.json --report OK/s.html` used to write s.html and then fail
// (issue 44; the CLI writes TerminalOutput's files all or none).
Status ShowSuggestions(const CommandResult& result, const CommandOptions& options, TerminalOutput& shown) {
  const SuggestValue& value = std::get<SuggestValue>(result.value);
  if (!value.result.findings.empty()) shown.err = FindingsForTerminal(value.result.findings, options.verbose);
  shown.out = options.format == "json" ? SuggestDocument(result, options)
                                       : SuggestText(value.options, value.result, options.verbose);
  if (!options.report.empty() && !value.page) {
    shown.notes.push_back(Diag{Severity::kNote, {}, "nothing fits: no report written to " + options.report, {}});
  }
  for (auto& [path, text] : SuggestFiles(result, options)) {
    shown.files.push_back({std::move(path), "--report", std::move(text)});
  }
  return Status();
}

}  // namespace

CommandSpec SuggestCommand() {
  return {
      .name = "suggest",
      .summary = "search every mesh, checkpoint policy and microbatch count; rank what fits by step time",
      .groups = {OptionGroup::kConfig, OptionGroup::kPipeline, OptionGroup::kStep, OptionGroup::kStepState,
                 OptionGroup::kHardware},
      .options = {"uneven", "slices", "suggest_rules", "top", "max_pp", "max_microbatches", "max_tpot", "decode",
                  "precision", "torus", "format", "output", "report"},
      .check = CheckSuggestCommand,
      .run = [](const RunContext& context, const CheckedCommand& command) -> StatusOr<CommandResult> {
        EP_ASSIGN_OR_RETURN(const Checked<SuggestOptions>* checked, command.Pipeline<SuggestOptions>());
        const CommandOptions& options = command.options;
        SuggestValue value;
        value.options = **checked;
        EP_ASSIGN_OR_RETURN(value.result, Suggest(context.model, *checked));
        if (!options.report.empty() && !value.result.ranked.empty()) {
          EP_ASSIGN_OR_RETURN(ReportResult page, SuggestReport(context.model, value.options, value.result));
          EP_ASSIGN_OR_RETURN(value.page, ReportPage(page.data, context.model->env().limits));
        }
        const Outcome outcome =
            value.result.ranked.empty() || !value.result.findings.empty() ? Outcome::kFindings : Outcome::kOk;
        return CommandResult{.outcome = outcome, .value = std::move(value)};
      },
      .document = SuggestDocument,
      .files = SuggestFiles,
      .terminal = ShowSuggestions,
  };
}

}  // namespace easyplan::api
