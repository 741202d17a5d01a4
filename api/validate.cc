#include "api/validate.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/activation_pipeline.h"
#include "api/choices.h"
#include "api/context_length.h"
#include "api/findings_json.h"
#include "api/json_text.h"
#include "api/memory_pipeline.h"
#include "api/option_checks.h"
#include "api/plan_inputs.h"
#include "core/byte_size.h"
#include "core/human.h"

namespace easyplan::api {
namespace {

/// Devices whose parameters alone exceed the budget: one finding, the worst device first.
void AddBudgetFindings(const planner::Plan& plan, int64_t budget, const std::string& budget_flag,
                       const std::string& budget_text, std::vector<planner::Finding>& findings) {
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
          fmt::format("device {} holds {} of parameters, over the {} budget of {} by {}{}", worst,
                      HumanBytesBinary(bytes), budget_flag, budget_text, HumanBytesBinary(bytes - budget),
                      over > 1 ? fmt::format(" ({} of {} devices are over)", over, plan.device_bytes.size()) : ""),
      .count = 0,
      .notes = {"shard the largest replicated tensors (see `easyplan plan --format table`), or add devices to an "
                "axis that shards them"}};
  findings.insert(findings.begin(), std::move(finding));
}

/// `validate --mode train|prefill|decode --batch B --seq S --max-memory M`: the device whose whole memory (see
/// `easyplan memory`) is over the budget, the worst device first.
void AddMemoryBudgetFinding(const planner::MemoryReport& report, const std::string& budget_flag,
                            const std::string& budget_text, std::vector<planner::Finding>& findings) {
  if (report.fits) return;
  int64_t over = 0;
  for (const planner::DeviceMemory& d : report.devices) over += d.total > report.budget_per_device;
  const planner::DeviceMemory& w = report.Worst();
  planner::Finding finding{
      .code = planner::FindingCode::kOverBudget,
      .severity = Severity::kError,
      .message = fmt::format(
          "device {} needs {} to {} (params {}, grads {}, optimizer {}, activations {}, kv cache {}, transient {}), "
          "over the {} budget of {} by {}{}",
          w.id, HumanBytesBinary(w.total), ModeName(report.mode), HumanBytesBinary(w.params), HumanBytesBinary(w.grads),
          HumanBytesBinary(w.optimizer), HumanBytesBinary(w.activations), HumanBytesBinary(w.kv_cache),
          HumanBytesBinary(w.transient), budget_flag, budget_text, HumanBytesBinary(w.total - report.budget_per_device),
          over > 1 ? fmt::format(" ({} of {} devices are over)", over, report.devices.size()) : ""),
      .count = 0,
      .notes = {"`easyplan memory` with the same options shows the breakdown of every device"}};
  findings.insert(findings.begin(), std::move(finding));
}

/// Without a budget: the worst device's parameters against the largest accelerator the hardware
/// catalogue lists (every bundled hardware profile's part is there). A plan no bundled accelerator could hold is a
/// finding, though no budget was given (issue 44: deepseek-v3 on fsdp=64,ep=8,tp=4 held 305 GiB per device
/// and validate said "ok").
void AddFitsNoDeviceFinding(const planner::Plan& plan, const std::vector<step::HardwareProfile>& kinds,
                            std::vector<planner::Finding>& findings) {
  if (plan.device_bytes.empty() || kinds.empty()) return;
  const auto worst = std::max_element(plan.device_bytes.begin(), plan.device_bytes.end());
  const auto largest = std::max_element(kinds.begin(), kinds.end(),
                                        [](const auto& a, const auto& b) { return a.hbm_bytes < b.hbm_bytes; });
  if (*worst <= largest->hbm_bytes) return;
  planner::Finding finding{
      .code = planner::FindingCode::kFitsNoDevice,
      .severity = planner::FindingSeverity(planner::FindingCode::kFitsNoDevice),
      .message = fmt::format("device {} holds {} of parameters, more than any bundled accelerator: the largest, {} "
                             "({}), has {}",
                             worst - plan.device_bytes.begin(), HumanBytesBinary(*worst), largest->name,
                             largest->description, HumanBytesBinary(largest->hbm_bytes)),
      .count = 0,
      .notes = {"shard the largest tensors over more devices, or give your accelerator's memory with --max-memory "
                "(schemas/hardware/ lists the bundled ones)"}};
  findings.insert(findings.begin(), std::move(finding));
}

}  // namespace

ActivationOptions ValidateOptions::Activations() const {
  ActivationOptions activations;
  activations.mode = step.mode;
  activations.batch = step.batch;
  activations.seq = step.seq;
  return activations;
}

Status CheckValidateOptions(const ValidateOptions& options) {
  EP_RETURN_IF_ERROR(CheckPlanOptions(options.plan));
  const MemoryOptions& step = options.step;
  if (!step.max_memory.empty()) EP_RETURN_IF_ERROR(CheckOptionValue("max_memory", Json(step.max_memory)));
  // --hardware without --max-memory budgets the profile's HBM (read with the config, in Validate).
  const bool budget = !step.max_memory.empty() || !step.hardware.empty();
  const bool with_activations = !step.mode.empty();
  if (with_activations) EP_RETURN_IF_ERROR(CheckOptionValue("mode", Json(step.mode), "validate"));
  const bool serving = step.mode == "prefill" || step.mode == "decode";
  EP_RETURN_IF_ERROR(CheckActivationOptions(options.Activations()));
  if (serving && budget && !(step.batch && step.seq)) {
    return Status::BadInput(
        {}, "--mode " + step.mode + " --max-memory needs --batch and --seq: they size the KV cache and the step",
        {"e.g. --mode " + step.mode + " --batch 8 --seq 4096"});
  }
  // --mode train|prefill|decode with --batch/--seq: the budget holds the whole memory of `easyplan memory`.
  const bool memory_budget = budget && (serving || step.mode == "train") && step.batch && step.seq;
  if (!with_activations && (step.batch || step.seq)) {
    return Status::BadInput({}, "--batch and --seq describe the activations of a runtime mode: add --mode",
                            {"e.g. --mode decode --batch 8 --seq 4096"});
  }
  if (!memory_budget && HasStepStateOptions(step)) {
    return Status::BadInput({},
                            "--optimizer, --grad-dtype, --opt-state-dtype, --master-weights and --max-length size "
                            "the whole memory: they need --max-memory with --mode train|prefill|decode --batch --seq",
                            {"e.g. --max-memory 80GiB --mode train --batch 8 --seq 4096 --optimizer adafactor"});
  }
  return Status();
}

StatusOr<ValidateResult> Validate(const std::shared_ptr<const Model>& model, const ValidateOptions& options) {
  EP_ASSIGN_OR_RETURN(const Checked<ValidateOptions> checked, Checked<ValidateOptions>::Of(options));
  return Validate(model, checked);
}

StatusOr<ValidateResult> Validate(const std::shared_ptr<const Model>& model, const Checked<ValidateOptions>& checked) {
  const ValidateOptions& options = *checked;
  ValidateResult result;
  const MemoryOptions& step = options.step;
  result.budget_text = step.max_memory;
  std::string budget_flag = "--max-memory";
  if (!step.max_memory.empty() || !step.hardware.empty()) {
    // As memory takes them: --max-memory, else the accelerator's memory (a profile or a memory-only entry of the
    // catalogue).
    EP_ASSIGN_OR_RETURN(result.budget, MemoryBudget(*model, step, &result.budget_text));
    if (step.max_memory.empty()) budget_flag = "--hardware";
  }
  const bool serving = step.mode == "prefill" || step.mode == "decode";
  const bool memory_budget = result.budget && (serving || step.mode == "train") && step.batch && step.seq;
  EP_ASSIGN_OR_RETURN(PlanInputs inputs, PreparePlan(model, checked.PartOf(&ValidateOptions::plan)));
  if (options.plan.rules == "builtin" && inputs.rules != nullptr) result.builtin_rules = inputs.rules->source;
  const std::string& config = options.plan.config.config;
  if (!config.empty() && config != "-") {
    const std::string slash = config.ends_with('/') ? "" : "/";
    result.config_file = model->env().fs->IsDirectory(config) ? config + slash + "config.json" : config;
  }
  // Only the whole-memory budget reads the plan entries.
  EP_ASSIGN_OR_RETURN(planner::Plan plan, inputs.Build(/*keep_params=*/memory_budget));
  std::vector<planner::Finding>& findings = result.findings;
  findings = plan.findings;
  if (result.budget && !memory_budget) {
    AddBudgetFindings(plan, *result.budget, budget_flag, result.budget_text, findings);
  }
  if (!result.budget) {
    EP_ASSIGN_OR_RETURN(const std::vector<step::HardwareProfile>* kinds, model->DeviceKinds());
    AddFitsNoDeviceFinding(plan, *kinds, findings);
  }
  if (memory_budget) {
    const MemoryOptions& memory = step;
    EP_RETURN_IF_ERROR(CheckMemoryOptions(memory));
    // Serving's cache length against the model's context (--seq is the activations' below).
    if (memory.max_length) {
      MemoryOptions cache;
      cache.max_length = memory.max_length;
      EP_ASSIGN_OR_RETURN(const std::vector<planner::Finding> context, ContextLengthFindings(inputs, cache));
      findings.insert(findings.end(), context.begin(), context.end());
    }
    EP_ASSIGN_OR_RETURN(planner::MemoryReport report, BuildMemoryReport(inputs, plan, memory, *result.budget));
    AddMemoryBudgetFinding(report, budget_flag, result.budget_text, findings);
    result.worst_memory = report.Worst();
    result.memory_mode = memory.mode;
  }
  if (!step.mode.empty()) {
    EP_ASSIGN_OR_RETURN(const planner::ActivationTable* table, model->ActivationTable());
    EP_ASSIGN_OR_RETURN(planner::ActivationPlan plan_activations,
                        BuildActivations(checked.PartOf(&ValidateOptions::Activations), *table, *inputs.presets,
                                         inputs.resolved(), inputs.mesh));
    findings.insert(findings.end(), plan_activations.findings.begin(), plan_activations.findings.end());
    // Errors first, as FindingList orders them.
    std::stable_sort(findings.begin(), findings.end(), [](const planner::Finding& a, const planner::Finding& b) {
      return static_cast<int>(a.severity) > static_cast<int>(b.severity);
    });
  }
  const SeverityCounts counts = CountSeverities(findings);
  result.errors = static_cast<int>(counts.errors);
  result.warnings = static_cast<int>(counts.warnings);
  result.strict = model->options().strict;
  result.failed = result.errors > 0 || (result.strict && result.warnings > 0);
  result.tensors = static_cast<int64_t>(inputs.tree->tensors.size());
  result.easydel_version = inputs.model->easydel_version().name;
  result.mesh = plan.mesh;
  result.summary = SummarizeDevices(plan.device_bytes);
  return result;
}

std::string ValidateToJsonText(const ValidateResult& result) {
  return FindingsToJsonText(
      result.findings,
      fmt::format("  \"ok\": {},\n  \"easydel_version\": {},\n  \"errors\": {},\n  \"warnings\": {},\n"
                  "  \"tensors\": {},\n  \"devices\": {},\n  \"max_bytes_per_device\": {},\n"
                  "  \"worst_device\": {},\n",
                  result.failed ? "false" : "true", Quoted(result.easydel_version), result.errors, result.warnings,
                  result.tensors, result.mesh.NumDevices(), result.summary.max, result.summary.worst_device));
}

}  // namespace easyplan::api
