// `easyplan suggest CONFIG --devices N --hardware H --mode M --batch B --seq S`: every mesh, checkpoint
// policy and microbatch count that EasyDeL accepts and that fits, ranked by step time (docs/COST.md).
// Exit 1 when nothing fits.
#include "api/commands.h"
#include "core/emit.h"

namespace easyplan::api {

CommandSpec SuggestCommand() {
  return {
      .name = "suggest",
      .summary = "search every mesh, checkpoint policy and microbatch count; rank what fits by step time",
      .groups = {OptionGroup::kConfig, OptionGroup::kStep, OptionGroup::kStepState, OptionGroup::kHardware},
      .options = {"uneven", "slices", "suggest_rules", "top", "max_microbatches", "max_tpot", "decode", "precision",
                  "format", "output", "report"},
      .check = [](const CommandOptions& options) { return CheckSuggestOptions(options.Suggest()); },
      .run = [](const RunContext& context, const CommandOptions& options) -> StatusOr<CommandResult> {
        SuggestValue value;
        value.options = options.Suggest();
        EP_ASSIGN_OR_RETURN(value.result, Suggest(context.model, value.options));
        if (!options.report.empty() && !value.result.ranked.empty()) {
          EP_ASSIGN_OR_RETURN(ReportResult page, SuggestReport(context.model, value.options, value.result));
          EP_ASSIGN_OR_RETURN(value.page, ReportPage(page.data, context.model->env().limits));
        }
        const Outcome outcome = value.result.ranked.empty() ? Outcome::kFindings : Outcome::kOk;
        return CommandResult{.outcome = outcome, .value = std::move(value)};
      },
      .document =
          [](const CommandResult& result, const CommandOptions&) {
            const SuggestValue& value = std::get<SuggestValue>(result.value);
            return EmitJson(SuggestToJson(value.options, value.result));
          },
      .files =
          [](const CommandResult& result, const CommandOptions& options) {
            std::vector<std::pair<std::string, std::string>> files;
            const SuggestValue& value = std::get<SuggestValue>(result.value);
            if (!options.report.empty() && value.page) files.emplace_back(options.report, *value.page);
            return files;
          },
  };
}

}  // namespace easyplan::api
