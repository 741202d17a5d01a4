// `easyplan validate CONFIG`: the plan's findings for CI, with exit code 1 on errors (or warnings
// under --strict), as text, JSON, JUnit XML or GitHub annotations.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "cli/activation_setup.h"
#include "cli/commands.h"
#include "cli/memory_setup.h"
#include "cli/plan_format.h"
#include "cli/plan_setup.h"
#include "core/byte_size.h"
#include "core/human.h"

namespace easyplan::cli {
namespace {

struct ValidateFlags {
  PlanFlags plan;
  std::string format = "text";
  std::string output;
  std::string max_memory;
  ActivationFlags activations;  ///< --mode/--batch/--seq: add the activation findings of that mode
  MemoryFlags step_state;       ///< --optimizer, --max-length, ...: what the whole-memory budget counts
};

/// Devices whose parameters alone exceed the budget: one finding, the worst device first.
void AddBudgetFindings(const planner::Plan& plan, int64_t budget, const std::string& budget_text,
                       std::vector<planner::Finding>& findings) {
  int64_t over = 0;
  int64_t worst = -1;
  for (size_t d = 0; d < plan.device_bytes.size(); ++d) {
    if (plan.device_bytes[d] <= budget) continue;
    ++over;
    if (worst < 0 || plan.device_bytes[d] > plan.device_bytes[static_cast<size_t>(worst)])
      worst = static_cast<int64_t>(d);
  }
  if (over == 0) return;
  const int64_t bytes = plan.device_bytes[static_cast<size_t>(worst)];
  planner::Finding finding{
      .code = planner::FindingCode::kOverBudget,
      .severity = Severity::kError,
      .message =
          fmt::format("device {} holds {} of parameters, over the --max-memory budget of {} by {}{}", worst,
                      HumanBytes(bytes), budget_text, HumanBytes(bytes - budget),
                      over > 1 ? fmt::format(" ({} of {} devices are over)", over, plan.device_bytes.size()) : ""),
      .count = 0,
      .notes = {"shard the largest replicated tensors (see `easyplan plan --format table`), or add devices to an "
                "axis that shards them"}};
  findings.insert(findings.begin(), std::move(finding));
}

/// `validate --mode train|serve --batch B --seq S --max-memory M`: the device whose whole memory (see
/// `easyplan memory`) is over the budget, the worst device first.
void AddMemoryBudgetFinding(const planner::MemoryReport& report, const std::string& budget_text,
                            std::vector<planner::Finding>& findings) {
  if (report.fits) return;
  int64_t over = 0;
  for (const planner::DeviceMemory& d : report.devices) over += d.total > report.memory_per_device;
  const planner::DeviceMemory& w = report.devices[static_cast<size_t>(report.worst)];
  planner::Finding finding{
      .code = planner::FindingCode::kOverBudget,
      .severity = Severity::kError,
      .message = fmt::format(
          "device {} needs {} to {} (params {}, grads {}, optimizer {}, activations {}, kv cache {}, transient {}), "
          "over the --max-memory budget of {} by {}{}",
          w.id, HumanBytesBinary(w.total), report.mode == planner::MemoryMode::kTrain ? "train" : "serve",
          HumanBytesBinary(w.params), HumanBytesBinary(w.grads), HumanBytesBinary(w.optimizer),
          HumanBytesBinary(w.activations), HumanBytesBinary(w.kv_cache), HumanBytesBinary(w.transient), budget_text,
          HumanBytesBinary(w.total - report.memory_per_device),
          over > 1 ? fmt::format(" ({} of {} devices are over)", over, report.devices.size()) : ""),
      .count = 0,
      .notes = {"`easyplan memory` with the same options shows the breakdown of every device"}};
  findings.insert(findings.begin(), std::move(finding));
}

StatusOr<int> RunValidate(const ValidateFlags& flags, Context& ctx) {
  EP_RETURN_IF_ERROR(CheckChoice("--format", flags.format, {"text", "json", "junit", "github"}));
  std::optional<int64_t> budget;
  if (!flags.max_memory.empty()) {
    EP_ASSIGN_OR_RETURN(budget, ParseByteSize(flags.max_memory, "--max-memory"));
  }
  const bool with_activations = !flags.activations.mode.empty();
  // --mode serve is memory's serving mode: its activation findings are the prefill step's.
  const bool serve = flags.activations.mode == "serve";
  ActivationFlags activation_flags = flags.activations;
  if (serve) activation_flags.mode = "prefill";
  EP_RETURN_IF_ERROR(CheckActivationFlags(activation_flags));
  if (serve && budget && !(flags.activations.batch && flags.activations.seq)) {
    return Status::BadInput({},
                            "--mode serve --max-memory needs --batch and --seq: they size the KV cache and the step",
                            {"e.g. --mode serve --batch 8 --seq 4096"});
  }
  // --mode train|serve with --batch/--seq: the budget holds the whole memory of `easyplan memory`.
  const bool memory_budget =
      budget && (serve || flags.activations.mode == "train") && flags.activations.batch && flags.activations.seq;
  if (!with_activations && (flags.activations.batch || flags.activations.seq)) {
    return Status::BadInput({}, "--batch and --seq describe the activations of a runtime mode: add --mode",
                            {"e.g. --mode decode --batch 8 --seq 4096"});
  }
  if (!memory_budget && HasStepStateFlags(flags.step_state)) {
    return Status::BadInput({},
                            "--optimizer, --grad-dtype, --opt-state-dtype, --master-weights and --max-length size "
                            "the whole memory: they need --max-memory with --mode train|serve --batch --seq",
                            {"e.g. --max-memory 80GiB --mode train --batch 8 --seq 4096 --optimizer adafactor"});
  }
  EP_ASSIGN_OR_RETURN(std::unique_ptr<PlanInputs> inputs, LoadPlanInputs(ctx, flags.plan));
  planner::PlanRequest request = inputs->Request();
  request.keep_params = memory_budget;  // only the whole-memory budget reads the plan entries
  EP_ASSIGN_OR_RETURN(planner::Plan plan, planner::BuildPlan(request));
  std::vector<planner::Finding> findings = plan.findings;
  if (budget && !memory_budget) AddBudgetFindings(plan, *budget, flags.max_memory, findings);
  std::string whole_memory;  // with a whole-memory budget: the worst device's total, for the summary line
  if (memory_budget) {
    MemoryFlags memory = flags.step_state;
    memory.mode = serve ? "serve" : "train";
    memory.batch = flags.activations.batch;
    memory.seq = flags.activations.seq;
    EP_RETURN_IF_ERROR(CheckMemoryFlags(memory));
    EP_ASSIGN_OR_RETURN(planner::MemoryReport report,
                        BuildMemoryReport(ctx, *inputs, plan, memory, *budget, flags.plan.config.schemas_dir));
    AddMemoryBudgetFinding(report, flags.max_memory, findings);
    const planner::DeviceMemory& worst = report.devices[static_cast<size_t>(report.worst)];
    whole_memory =
        fmt::format("; {} to {} (device {})", HumanBytesBinary(worst.total), serve ? "serve" : "train", worst.id);
  }
  if (with_activations) {
    EP_ASSIGN_OR_RETURN(std::unique_ptr<planner::ActivationTable> table,
                        LoadActivationTable(ctx, flags.plan.config.schemas_dir));
    EP_ASSIGN_OR_RETURN(
        planner::ActivationPlan activations,
        BuildActivationsFromFlags(activation_flags, *table, *inputs->presets, inputs->resolved.config, inputs->mesh));
    findings.insert(findings.end(), activations.findings.begin(), activations.findings.end());
    // Errors first, as FindingList orders them.
    std::stable_sort(findings.begin(), findings.end(), [](const planner::Finding& a, const planner::Finding& b) {
      return static_cast<int>(a.severity) > static_cast<int>(b.severity);
    });
  }

  int errors = 0, warnings = 0;
  for (const planner::Finding& finding : findings) {
    errors += finding.severity == Severity::kError;
    warnings += finding.severity == Severity::kWarning;
  }
  const bool strict = flags.plan.config.strict;
  const bool failed = errors > 0 || (strict && warnings > 0);
  const DeviceSummary summary = SummarizeDevices(plan.device_bytes);

  std::string text;
  if (flags.format == "json") {
    text = FindingsToJsonText(
        findings, fmt::format("  \"ok\": {},\n  \"errors\": {},\n  \"warnings\": {},\n  \"tensors\": {},\n"
                              "  \"devices\": {},\n  \"max_bytes_per_device\": {},\n  \"worst_device\": {},\n",
                              failed ? "false" : "true", errors, warnings, inputs->tree.tensors.size(),
                              plan.mesh.NumDevices(), summary.max, summary.worst_device));
  } else if (flags.format == "junit") {
    text = FindingsToJunit(findings, strict);
  } else if (flags.format == "github") {
    text = FindingsToGithub(findings);
  } else {
    text = FindingsToText(findings);
    text += fmt::format("{}: {} tensors on mesh {} ({} devices); max {} {}per device (device {}){}{}\n",
                        failed ? "FAILED" : "ok", WithThousands(static_cast<int64_t>(inputs->tree.tensors.size())),
                        plan.mesh.ToString(), WithThousands(plan.mesh.NumDevices()), HumanBytes(summary.max),
                        whole_memory.empty() ? "" : "of parameters ", summary.worst_device, whole_memory,
                        budget ? " of " + flags.max_memory + " budget" : "");
  }
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, text));
  return failed ? kExitFindings : kExitOk;
}

}  // namespace

std::function<int(Context&)> AddValidateCommand(CLI::App& app) {
  auto flags = std::make_shared<ValidateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "check a plan for CI: unmatched tensors, bad axes, indivisible dims, dead rules, memory");
  AddPlanFlags(cmd, flags->plan);
  cmd->add_option("--format", flags->format, "text (default), json, junit (JUnit XML) or github (annotations)");
  cmd->add_option("-o,--output", flags->output, "write the report to FILE (atomically) instead of stdout");
  cmd->add_option("--max-memory", flags->max_memory,
                  "bytes a device may hold, e.g. 80GiB: parameters, or with --mode train|serve --batch --seq "
                  "the whole memory of `easyplan memory` (by default adamw with float32 state)");
  AddActivationFlags(cmd, flags->activations, /*full=*/false);
  AddStepStateFlags(cmd, flags->step_state);
  return [flags](Context& ctx) {
    StatusOr<int> code = RunValidate(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
