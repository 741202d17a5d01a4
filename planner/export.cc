#include "planner/export.h"

#include <fmt/format.h>

#include "core/did_you_mean.h"
#include "planner/expert_mesh.h"
#include "planner/export_dtensor.h"
#include "planner/export_hlo.h"
#include "planner/export_jax.h"
#include "planner/export_jax_activations.h"
#include "planner/export_maxtext.h"
#include "planner/export_megatron.h"
#include "planner/export_rules.h"
#include "planner/export_shardy.h"
#include "planner/export_tp_plan.h"

namespace easyplan::planner {

const std::vector<ExportFormatInfo>& ExportFormats() {
  static const std::vector<ExportFormatInfo> kFormats = {
      {.format = ExportFormat::kJax, .name = "jax", .needs_activation_table = true, .python_module = true},
      {.format = ExportFormat::kJaxJson, .name = "jax-json", .needs_activation_table = true},
      {.format = ExportFormat::kXlaHlo, .name = "xla-hlo"},
      {.format = ExportFormat::kShardy, .name = "shardy"},
      {.format = ExportFormat::kTorch,
       .name = "torch",
       .hf_names = true,
       .pipelines = true,
       .takes_microbatches = true,
       .vocabulary = "schemas/runtimes/torch_pipelining.yaml"},
      {.format = ExportFormat::kHfTpPlan, .name = "hf-tp-plan", .hf_names = true, .requires_hf_tree = true},
      {.format = ExportFormat::kPlanJson, .name = "json", .pipelines = true, .takes_microbatches = true},
      {.format = ExportFormat::kMegatron,
       .name = "megatron",
       .pipelines = true,
       .takes_batch = true,
       .takes_microbatches = true,
       .vocabulary = "schemas/runtimes/megatron.yaml"},
      {.format = ExportFormat::kMaxText,
       .name = "maxtext",
       .pipelines = true,
       .takes_batch = true,
       .takes_microbatches = true,
       .vocabulary = "schemas/runtimes/maxtext.yaml"},
      {.format = ExportFormat::kRules, .name = "rules"},
  };
  return kFormats;
}

std::vector<std::string> ExportFormatNames() {
  std::vector<std::string> names;
  for (const ExportFormatInfo& format : ExportFormats()) names.emplace_back(format.name);
  return names;
}

StatusOr<const ExportFormatInfo*> FindExportFormat(std::string_view name) {
  for (const ExportFormatInfo& format : ExportFormats()) {
    if (format.name == name) return &format;
  }
  const std::vector<std::string> names = ExportFormatNames();
  std::string message = "--to '" + std::string(name) + "' is not supported";
  if (auto suggestion = SuggestClosest(name, names)) message += " (did you mean '" + *suggestion + "'?)";
  return Status::BadInput({}, message, {"expected one of " + JoinQuoted(names)});
}

Status CheckExportOptions(const ExportFormatInfo& format, const ExportOptions& options) {
  if (options.json && format.python_module) {
    return Status::BadInput({},
                            "--format json does not apply to --to " + std::string(format.name) + " (a Python module)",
                            {"use --to jax-json for the same facts as JSON"});
  }
  const char* step_flag = options.step.batch && !format.takes_batch                 ? "--batch"
                          : options.step.seq && !format.takes_batch                 ? "--seq"
                          : options.step.microbatches && !format.takes_microbatches ? "--microbatches"
                                                                                    : nullptr;
  if (step_flag != nullptr) {
    return Status::BadInput({}, fmt::format("{} does not apply to --to {}", step_flag, format.name),
                            {"the step (--batch, --seq, --microbatches) goes to --to megatron and maxtext; "
                             "--microbatches also to torch and json"});
  }
  return Status();
}

Status CheckExportPipeline(const ExportFormatInfo& format, const PipelineSplit& pipeline) {
  if (!pipeline.pipelined() || format.pipelines) return Status();
  return Status::BadInput(
      {},
      fmt::format("--mesh pp={}: --to {} gives each tensor one sharding over the whole mesh, and a pipelined "
                  "tensor lives on its stage's devices only",
                  pipeline.stages, format.name),
      {"--to torch, megatron, maxtext and json export a pipeline; drop pp from the mesh for this format"});
}

Status CheckExportTree(const ExportFormatInfo& format, const ParamTree& tree) {
  if (format.requires_hf_tree && tree.layout != Layout::kHf) {
    return Status::BadInput(
        {}, "--to " + std::string(format.name) + " needs HF tensor names (model.layers.0.self_attn.q_proj.weight)",
        {"use --layout hf (the default for this format), or an HF-layout --tree"});
  }
  return Status();
}

StatusOr<std::string> ExportPlan(std::string_view format_name, const ExportInputs& inputs,
                                 const ExportOptions& options) {
  EP_ASSIGN_OR_RETURN(const ExportFormatInfo* format, FindExportFormat(format_name));
  if (!inputs.plan || !inputs.tree || !inputs.rules || !inputs.presets || !inputs.config) {
    return Status::Internal("ExportPlan: incomplete inputs");
  }
  EP_RETURN_IF_ERROR(CheckExportOptions(*format, options));
  EP_RETURN_IF_ERROR(CheckExportTree(*format, *inputs.tree));
  EP_RETURN_IF_ERROR(CheckExportPipeline(*format, inputs.plan->pipeline));
  if (!format->vocabulary.empty() && !inputs.vocabulary &&
      (format->format != ExportFormat::kTorch || inputs.plan->pipeline.pipelined())) {
    return Status::Internal("ExportPlan: --to " + std::string(format->name) + " needs " +
                            std::string(format->vocabulary));
  }
  const Plan& plan = *inputs.plan;
  const ParamTree& tree = *inputs.tree;
  if (plan.params.size() != tree.tensors.size()) {
    return Status::Internal("ExportPlan: the plan has no entry per tensor (plan it with keep_params)");
  }
  if (format->needs_activation_table && !inputs.activation_table) {
    return Status::Internal("ExportPlan: --to " + std::string(format->name) + " needs the activation table");
  }
  const Json no_geometry = Json::object();
  const Json& geometry = inputs.geometry ? *inputs.geometry : no_geometry;
  const schemas::DimKeysByObject no_dim_keys;
  const schemas::DimKeysByObject& dim_keys = inputs.dim_keys ? *inputs.dim_keys : no_dim_keys;
  switch (format->format) {
    case ExportFormat::kJax: {
      EP_ASSIGN_OR_RETURN(
          JaxActivations activations,
          JaxActivationSpecs(*inputs.activation_table, *inputs.presets, *inputs.config, geometry, dim_keys, plan.mesh));
      return JaxModuleExport(plan, tree, *inputs.rules, *inputs.presets, *inputs.config, activations,
                             inputs.easydel_version);
    }
    case ExportFormat::kJaxJson: {
      EP_ASSIGN_OR_RETURN(
          JaxActivations activations,
          JaxActivationSpecs(*inputs.activation_table, *inputs.presets, *inputs.config, geometry, dim_keys, plan.mesh));
      return JaxJsonExport(plan, tree, activations);
    }
    case ExportFormat::kXlaHlo:
      return XlaHloExport(plan, tree, options.json);
    case ExportFormat::kShardy:
      return ShardyExport(plan, tree, options.json);
    case ExportFormat::kTorch:
      return TorchExport(plan, tree, {.vocabulary = inputs.vocabulary, .microbatches = options.step.microbatches});
    case ExportFormat::kHfTpPlan:
      return HfTpPlanExport(plan, tree, ParallelAxisNamesOf(*inputs.config).tp);
    case ExportFormat::kRules:
      return RuleFileExport(plan, *inputs.rules, inputs.easydel_version);
    case ExportFormat::kPlanJson:
      if (!inputs.plan_json) return Status::Internal("ExportPlan: --to json needs the plan's JSON writer");
      return inputs.plan_json();
    case ExportFormat::kMegatron:
    case ExportFormat::kMaxText: {
      const std::string_view runtime = format->format == ExportFormat::kMegatron ? "Megatron-LM" : "MaxText";
      const ParallelAxisNames names = ParallelAxisNamesOf(*inputs.config);
      EP_ASSIGN_OR_RETURN(const RoleSizes roles, RolesOf(plan.mesh, names, runtime));
      RuntimeModel model = inputs.model;
      model.gradient_checkpointing = inputs.config->value("gradient_checkpointing", std::string());
      model.expert_parallel = FoldExpertMesh(plan.mesh, names, ExpertBindingOf(*inputs.config)).shape[ExpertMesh::kEp];
      if (format->format == ExportFormat::kMegatron) {
        return MegatronExport(plan, roles, model, options.step, *inputs.vocabulary, options.json);
      }
      return MaxTextExport(plan, roles, model, options.step, *inputs.vocabulary, options.json);
    }
  }
  return Status::Internal("ExportPlan: unhandled format");
}

}  // namespace easyplan::planner
