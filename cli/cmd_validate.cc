// `easyplan validate CONFIG`: the plan's findings for CI, with exit code 1 on errors (or warnings
// under --strict), as text, JSON, JUnit XML or GitHub annotations.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "api/validate.h"
#include "cli/commands.h"
#include "cli/pipeline_flags.h"
#include "cli/plan_format.h"
#include "core/human.h"

namespace easyplan::cli {
namespace {

struct ValidateFlags {
  api::ValidateOptions validate;
  std::string format = "text";
  std::string output;
};

StatusOr<int> RunValidate(const ValidateFlags& flags, Context& ctx) {
  EP_RETURN_IF_ERROR(CheckChoice("--format", flags.format, {"text", "json", "junit", "github"}));
  EP_RETURN_IF_ERROR(api::CheckValidateOptions(flags.validate));
  EP_RETURN_IF_ERROR(api::CheckPlanOptions(flags.validate.plan));
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const api::Model> model, LoadModel(ctx, flags.validate.plan.config));
  EP_ASSIGN_OR_RETURN(api::ValidateResult result, api::Validate(model, flags.validate));
  std::string text;
  if (flags.format == "json") {
    text = api::ValidateToJsonText(result);
  } else if (flags.format == "junit") {
    text = FindingsToJunit(result.findings, result.strict);
  } else if (flags.format == "github") {
    text = FindingsToGithub(result.findings, result.builtin_rules, result.config_file);
  } else {
    std::string whole_memory;  // with a whole-memory budget: the worst device's total
    if (result.worst_memory) {
      whole_memory = fmt::format("; {} to {} (device {})", HumanBytesBinary(result.worst_memory->total),
                                 result.memory_mode, result.worst_memory->id);
    }
    text = api::FindingsForTerminal(result.findings, ctx.verbose);
    text += fmt::format("{}: {} tensors on mesh {} ({} devices); max {} {}per device (device {}){}{}\n",
                        result.failed ? "FAILED" : "ok", WithThousands(result.tensors), result.mesh.ToString(),
                        WithThousands(result.mesh.NumDevices()), HumanBytesBinary(result.summary.max),
                        whole_memory.empty() ? "" : "of parameters ", result.summary.worst_device, whole_memory,
                        result.budget ? " of " + result.budget_text + " budget" : "");
  }
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, text));
  return result.failed ? kExitFindings : kExitOk;
}

}  // namespace

std::function<int(Context&)> AddValidateCommand(CLI::App& app) {
  auto flags = std::make_shared<ValidateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "check a plan for CI: unmatched tensors, bad axes, indivisible dims, dead rules, memory");
  AddPlanFlags(cmd, flags->validate.plan);
  cmd->add_option("--format", flags->format, "text (default), json, junit (JUnit XML) or github (annotations)");
  cmd->add_option("-o,--output", flags->output, "write the report to FILE (atomically) instead of stdout");
  cmd->add_option("--max-memory", flags->validate.max_memory,
                  "bytes a device may hold, e.g. 80GiB: parameters, or with --mode train|serve --batch --seq "
                  "the whole memory of `easyplan memory` (by default adamw with float32 state)");
  AddHardwareFlag(cmd, flags->validate.hardware);
  AddActivationFlags(cmd, flags->validate.activations, /*full=*/false);
  AddStepStateFlags(cmd, flags->validate.step_state);
  return [flags](Context& ctx) {
    StatusOr<int> code = RunValidate(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
