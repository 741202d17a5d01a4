#include "api/command_runner.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/activation_pipeline.h"
#include "api/activations_json.h"
#include "api/check.h"
#include "api/choices.h"
#include "api/cost.h"
#include "api/explain.h"
#include "api/export.h"
#include "api/memory_json.h"
#include "api/memory_pipeline.h"
#include "api/plan_inputs.h"
#include "api/plan_json.h"
#include "api/plan_pipeline.h"
#include "api/report.h"
#include "api/suggest.h"
#include "api/tree_document.h"
#include "api/tree_source.h"
#include "api/validate.h"
#include "core/emit.h"
#include "core/json_parse.h"

namespace easyplan::api {
namespace {

StatusOr<CommandOutput> RunTree(const std::shared_ptr<const Model>& model, const CommandOptions& options) {
  const TreeOptions& t = options.tree;
  EP_RETURN_IF_ERROR(CheckChoice("--layout", t.layout, {"easydel", "hf"}));
  if (t.max_tensors < 1) {
    return Status::BadInput({}, "--max-tensors must be at least 1, found " + std::to_string(t.max_tensors));
  }
  if (!t.tree.empty() && !t.from.empty()) {
    return Status::BadInput({}, "--tree and --from are two sources for the same tree: give one");
  }
  TreeSpec spec;
  spec.layout = *ParseLayout(t.layout);
  spec.include_buffers = t.include_buffers;
  spec.max_tensors = t.max_tensors;
  if (!t.dtype.empty()) {
    spec.dtype = ParseDType(t.dtype);
    if (!spec.dtype) return Status::BadInput({}, "--dtype '" + t.dtype + "' is not a dtype name");
  }
  CommandOutput out;
  if (options.diff) {
    if (t.from.empty() || !model->has_config()) {
      return Status::BadInput({}, "--diff compares a config's template with a checkpoint: give CONFIG and --from PATH");
    }
    spec.layout = Layout::kHf;
    spec.include_buffers = true;
    EP_ASSIGN_OR_RETURN(Model::TreePtr expected, model->Tree(spec));
    EP_ASSIGN_OR_RETURN(TreeDiff diff, DiffWithCheckpoint(model->env(), *expected, t.from));
    out.text = EmitJson(DiffToJson(diff));
    out.findings_failed = !diff.Clean();
    return out;
  }
  if (options.plan.given_tree) {
    spec.source = TreeSpec::Source::kGiven;
    spec.given = options.plan.given_tree;
  } else if (!t.tree.empty()) {
    spec.source = TreeSpec::Source::kFile;
    spec.path = t.tree;
  } else if (!t.from.empty()) {
    EP_RETURN_IF_ERROR(CheckCheckpointSource(model->env(), t.from, spec.layout));
    spec.source = TreeSpec::Source::kCheckpoint;
    spec.path = t.from;
  } else if (!model->has_config()) {
    return Status::BadInput({}, "CONFIG is required (or --tree FILE.json, or --from CHECKPOINT)");
  }
  EP_ASSIGN_OR_RETURN(Model::TreePtr tree, model->Tree(spec));
  EP_ASSIGN_OR_RETURN(TreeTotals totals, tree->Totals());
  out.text = TreeToJsonText(*tree, totals);
  return out;
}

StatusOr<CommandOutput> RunPlan(const std::shared_ptr<const Model>& model, const CommandOptions& options) {
  CommandOutput out;
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const PlanResult> result, PlanCommand(model, options, &out.extra));
  out.text = PlanResultToJsonText(*result, {options.rank, options.summary});
  out.findings_failed = result->plan.HasErrors();
  return out;
}

StatusOr<CommandOutput> RunMemory(const std::shared_ptr<const Model>& model, const CommandOptions& options) {
  EP_ASSIGN_OR_RETURN(MemoryResult result, Memory(model, options.plan, options.memory));
  CommandOutput out;
  out.text = MemoryToJsonText(*result.report, result.hardware, &result.plan.findings);
  out.findings_failed = !result.report->fits || result.plan.HasErrors();
  return out;
}

}  // namespace

StatusOr<std::shared_ptr<const Model>> ModelWithOptions(const std::shared_ptr<const Model>& model,
                                                        const ConfigOptions& options) {
  const ConfigOptions& own = model->options();
  const std::pair<bool, const char*> fixed[] = {
      {options.defaults != own.defaults, "defaults"},
      {options.overrides != own.overrides, "overrides"},
      {options.devices != own.devices, "devices"},
      {options.strict != own.strict, "strict"},
      {options.schemas_dir != own.schemas_dir, "schemas_dir"},
  };
  for (const auto& [differs, name] : fixed) {
    if (!differs) continue;
    return Status::BadInput(
        {}, fmt::format("{}= is an option of the Model, which resolved its config once without it", name),
        {fmt::format("give it when loading the Model, easyplan.Model(config, {}=...), or to a function that loads "
                     "one, e.g. easyplan.plan(config, {}=...)",
                     name, name)});
  }
  const bool own_prefix =
      options.sets.size() >= own.sets.size() && std::equal(own.sets.begin(), own.sets.end(), options.sets.begin());
  if (!own_prefix) return Status::Internal("a call's --set values do not start with its Model's own");
  if (options.sets.size() == own.sets.size()) return model;
  if (!model->has_config()) {
    return Status::BadInput({}, "set= changes a config, and this Model has none (EasyDeL's defaults alone)",
                            {"load the Model from a config: easyplan.Model(config, set=...)"});
  }
  const std::vector<std::string> extra(options.sets.begin() + static_cast<std::ptrdiff_t>(own.sets.size()),
                                       options.sets.end());
  return model->WithSets(extra);
}

StatusOr<std::shared_ptr<const PlanResult>> PlanCommand(const std::shared_ptr<const Model>& model,
                                                        const CommandOptions& options, Json* extra) {
  EP_ASSIGN_OR_RETURN(PlanResult result, PlanModel(model, options.plan, {options.rank, options.summary}));
  EP_ASSIGN_OR_RETURN(auto rules, ResolvedRules(result.inputs));
  Json list = Json::array();
  for (const auto& [pattern, spec] : rules) list.push_back(Json::array({pattern, spec.ToJson()}));
  *extra = Json::object();
  (*extra)["rules"] = std::move(list);
  (*extra)["bytes_per_device"] = Json(result.plan.device_bytes);
  EP_ASSIGN_OR_RETURN(Document findings, ParseJsonDocument(FindingsToJsonText(result.plan.findings, ""), "<findings>"));
  (*extra)["findings"] = findings.root()["findings"];
  (*extra)["failed"] = result.plan.HasErrors();
  return std::make_shared<const PlanResult>(std::move(result));
}

StatusOr<CommandOutput> RunCommand(const std::shared_ptr<const Model>& model, const std::string& command,
                                   const CommandOptions& options) {
  if (command == "resolve") {
    return CommandOutput{EmitJson(ResolvedDocument(*model, options.provenance)), true, false, Json()};
  }
  if (command == "tree") return RunTree(model, options);
  if (command == "activations") {
    EP_ASSIGN_OR_RETURN(ActivationsResult result, Activations(model, options.mesh, options.activations));
    CommandOutput out;
    out.text = ActivationsToJsonText({&result.plan, result.model_type, result.mesh_source});
    out.findings_failed = result.Failed();
    return out;
  }
  if (command == "plan") return RunPlan(model, options);
  if (command == "memory") return RunMemory(model, options);
  if (command == "validate") {
    EP_ASSIGN_OR_RETURN(ValidateResult result, Validate(model, options.Validate()));
    return CommandOutput{ValidateToJsonText(result), true, result.failed, Json()};
  }
  if (command == "explain") {
    EP_ASSIGN_OR_RETURN(std::string text, Explain(model, options.plan, options.pattern));
    return CommandOutput{std::move(text), false, false, Json()};
  }
  if (command == "check") {
    CheckOptions check;
    check.plan = options.plan;
    check.level = options.level;
    check.seed = options.seed;
    check.memory = options.check_memory;
    check.max_numeric_devices = options.max_numeric_devices;
    EP_ASSIGN_OR_RETURN(CheckRun run, Check(model, check));
    if (run.plan.HasErrors()) {
      // Nothing ran: the plan's findings, in validate's shape.
      return CommandOutput{FindingsToJsonText(run.plan.findings, "  \"ok\": false,\n"), true, true, Json()};
    }
    return CommandOutput{EmitJson(CheckToJson(run)), true, !run.ok(), Json()};
  }
  if (command == "cost") {
    EP_ASSIGN_OR_RETURN(CostResult result, Cost(model, options.Cost()));
    if (!result.estimate) {
      return CommandOutput{FindingsToJsonText(result.plan.findings, "  \"ok\": false,\n"), true, true, Json()};
    }
    return CommandOutput{EmitJson(CostToJson(result)), true, !result.estimate->fits || result.plan.HasErrors(), Json()};
  }
  if (command == "suggest") {
    const SuggestOptions suggest = options.Suggest();
    EP_ASSIGN_OR_RETURN(SuggestResult result, Suggest(model, suggest));
    Json extra;
    if (options.suggest_report && !result.ranked.empty()) {
      EP_ASSIGN_OR_RETURN(ReportResult page, SuggestReport(model, suggest, result));
      extra = Json::object();
      EP_ASSIGN_OR_RETURN(extra["report"], ReportPage(page.data, model->env().limits));
    }
    return CommandOutput{EmitJson(SuggestToJson(suggest, result)), true, result.ranked.empty(), std::move(extra)};
  }
  if (command == "report") {
    EP_ASSIGN_OR_RETURN(ReportResult result, Report(model, options.Report()));
    EP_ASSIGN_OR_RETURN(std::string page, ReportPage(result.data, model->env().limits));
    return CommandOutput{std::move(page), false, result.Failed(), Json()};
  }
  if (command == "export") {
    EP_ASSIGN_OR_RETURN(ExportResult result,
                        Export(model, {options.plan, options.to, options.format, options.layout_given}));
    if (result.failed) {
      // No artifact: the plan's findings, in validate's shape.
      return CommandOutput{FindingsToJsonText(result.findings, "  \"ok\": false,\n"), true, true, Json()};
    }
    return CommandOutput{std::move(result.text), false, false, Json()};
  }
  return Status::Internal("RunCommand: '" + command + "' is in CommandNames() but has no pipeline");
}

}  // namespace easyplan::api
