// `easyplan validate CONFIG`: the plan's findings for CI, with exit code 1 on errors (or warnings
// under --strict), as text, JSON, JUnit XML or GitHub annotations.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "api/findings_text.h"
#include "api/validate.h"
#include "cli/commands.h"
#include "cli/plan_format.h"
#include "core/human.h"

namespace easyplan::cli {

Status RenderValidate(const api::CommandResult& run, const api::CommandOptions& options, Context& ctx) {
  const api::ValidateResult& result = std::get<api::ValidateResult>(run.value);
  const std::string& format = options.format;
  std::string text;
  if (format == "json") {
    text = api::ValidateToJsonText(result);
  } else if (format == "junit") {
    text = FindingsToJunit(result.findings, result.strict);
  } else if (format == "github") {
    text = FindingsToGithub(result.findings, result.builtin_rules, result.config_file);
  } else {
    std::string whole_memory;  // with a whole-memory budget: the worst device's total
    if (result.worst_memory) {
      whole_memory = fmt::format("; {} to {} (device {})", HumanBytesBinary(result.worst_memory->total),
                                 result.memory_mode, result.worst_memory->id);
    }
    text = api::FindingsForTerminal(result.findings, ctx.verbose);
    text += fmt::format("{}: {} tensors (EasyDeL {}) on mesh {} ({} devices); max {} {}per device (device {}){}{}\n",
                        result.failed ? "FAILED" : "ok", WithThousands(result.tensors), result.easydel_version,
                        result.mesh.ToString(), WithThousands(result.mesh.NumDevices()),
                        HumanBytesBinary(result.summary.max), whole_memory.empty() ? "" : "of parameters ",
                        result.summary.worst_device, whole_memory,
                        result.budget ? " of " + result.budget_text + " budget"
                                      : "; memory not checked (no --max-memory or --hardware)");
  }
  return WriteOutput(ctx, options.output, text);
}

}  // namespace easyplan::cli
