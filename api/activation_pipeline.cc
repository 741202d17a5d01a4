#include "api/activation_pipeline.h"

#include "api/choices.h"
#include "api/context_length.h"
#include "api/findings_json.h"
#include "api/option_checks.h"
#include "schemas/model_dims.h"

namespace easyplan::api {

Status CheckActivationOptions(const ActivationOptions& options) {
  // Each option as the command table declares its check (api/option_table.cc); then how they combine.
  if (!options.mode.empty()) EP_RETURN_IF_ERROR(CheckOptionValue("mode", Json(options.mode), "activations"));
  EP_RETURN_IF_ERROR(planner::ParseAttnLayout(options.attention_layout).status());
  if (options.softmax_aux_ndim) {
    EP_RETURN_IF_ERROR(CheckOptionValue("softmax_aux_ndim", Json(*options.softmax_aux_ndim)));
  }
  if (options.batch.has_value() != options.seq.has_value()) {
    return Status::BadInput({}, options.batch ? "--batch needs --seq (the tokens per sequence)"
                                              : "--seq needs --batch (the sequences per step)");
  }
  if (options.batch) {
    EP_RETURN_IF_ERROR(CheckOptionValue("batch", Json(*options.batch)));
    EP_RETURN_IF_ERROR(CheckOptionValue("seq", Json(*options.seq)));
  }
  EP_RETURN_IF_ERROR(CheckOptionValue("activation_dtype", Json(options.dtype)));
  EP_RETURN_IF_ERROR(CheckOptionValue("cache", Json(options.cache)));
  if (options.cache != "ragged") {
    for (const auto& [given, name] : {std::pair{options.page_size.has_value(), "--page-size"},
                                      std::pair{options.num_pages.has_value(), "--num-pages"},
                                      std::pair{!options.cache_version.empty(), "--cache-version"}}) {
      if (given) return Status::BadInput({}, std::string(name) + " needs --cache ragged");
    }
    return Status();
  }
  if (!options.cache_version.empty())
    EP_RETURN_IF_ERROR(CheckOptionValue("cache_version", Json(options.cache_version)));
  if (options.page_size) EP_RETURN_IF_ERROR(CheckOptionValue("page_size", Json(*options.page_size)));
  if (!options.num_pages) {
    return Status::BadInput(
        {},
        "--cache ragged needs --num-pages N: EasyDeL sizes the page pool from the free HBM of the "
        "devices at run time, which an offline planner cannot know",
        {"eSurge sizes it as free_hbm * kv_head_shards * dp // (2 * layers * page_size * kv_heads * "
         "head_dim * bytes); pass the page count your server reports"});
  }
  return CheckOptionValue("num_pages", Json(*options.num_pages));
}

StatusOr<planner::ActivationPlan> BuildActivations(const Checked<ActivationOptions>& checked,
                                                   const planner::ActivationTable& table, const rules::Presets& presets,
                                                   const schemas::ResolvedConfig& resolved, const Mesh& mesh) {
  const ActivationOptions& options = *checked;
  const Json& config = resolved.config;
  planner::ActivationRequest request;
  const std::string mode = options.mode.empty() ? "train" : options.mode;
  // CheckActivationOptions took the mode.
  request.attention.mode = ParseMode(mode).value_or(Mode::kTrain);
  EP_ASSIGN_OR_RETURN(request.attention.layout, planner::ParseAttnLayout(options.attention_layout));
  request.attention.qkv_mni = options.qkv_mni;
  request.attention.softmax_aux_ndim = options.softmax_aux_ndim;
  request.kernel = options.kernel;
  if (options.cache == "ragged") {
    planner::RaggedCacheOptions ragged;
    ragged.version = options.cache_version == "v2" ? 2 : 3;
    ragged.page_size = options.page_size.value_or(128);
    ragged.num_pages = options.num_pages.value_or(0);
    request.ragged = ragged;
  }
  request.batch = options.batch;
  request.seq = options.seq;
  EP_ASSIGN_OR_RETURN(const schemas::ModelDims dims, schemas::ModelDimsOf(resolved));
  // A model with attention sinks hands them to the kernel as its softmax aux, one logit per head
  // (gpt-oss: easydel/modules/gpt_oss passes `sinks` [heads] as softmax_aux).
  if (!request.attention.softmax_aux_ndim && dims.attention_sinks) request.attention.softmax_aux_ndim = 1;
  std::string dtype = options.dtype;
  if (dtype.empty()) dtype = dims.torch_dtype.empty() ? "bfloat16" : dims.torch_dtype;
  std::optional<DType> parsed_dtype = ParseDType(dtype);
  if (!parsed_dtype) {
    return Status::BadInput({},
                            "'" + dtype + "' is not a dtype name" +
                                (options.dtype.empty() ? " (the config's torch_dtype; pass --dtype)" : " (--dtype)"));
  }
  request.dtype = *parsed_dtype;
  request.table = &table;
  request.presets = &presets;
  request.config = &schemas::GeometryConfig(config);
  request.dims = &dims;
  request.mesh = mesh;
  // Past a learned position table the model cannot run (exit 2); past a rotary bound, a finding.
  std::optional<planner::Finding> context;
  if (options.seq) {
    EP_ASSIGN_OR_RETURN(context, ContextLengthFinding(dims, *options.seq, "--seq"));
  }
  EP_ASSIGN_OR_RETURN(planner::ActivationPlan plan, planner::BuildActivationPlan(request));
  if (context) plan.findings.insert(plan.findings.begin(), std::move(*context));
  return plan;
}

StatusOr<std::optional<ExpertReport>> ExpertReportOf(const planner::ActivationTable& table,
                                                     const rules::Presets& presets,
                                                     const schemas::ResolvedConfig& resolved, const Mesh& mesh) {
  const Json& model = schemas::GeometryConfig(resolved.config);
  EP_ASSIGN_OR_RETURN(const schemas::ModelDims dims, schemas::ModelDimsOf(resolved));
  ExpertReport report;
  report.mesh = planner::FoldExpertMesh(mesh, planner::ParallelAxisNamesOf(model), planner::ExpertBindingOf(model));
  EP_ASSIGN_OR_RETURN(std::optional<planner::ExpertSpecs> specs,
                      planner::GetExpertSpecs(table, presets, model, dims.experts, report.mesh));
  if (!specs) return std::optional<ExpertReport>();
  report.specs = std::move(*specs);
  return std::optional<ExpertReport>(std::move(report));
}

StatusOr<std::optional<ExpertReport>> ExpertReportForPlan(const PlanInputs& inputs) {
  EP_ASSIGN_OR_RETURN(const planner::ActivationTable* table, inputs.model->ActivationTable());
  return ExpertReportOf(*table, *inputs.presets, inputs.resolved(), inputs.mesh);
}

bool ActivationsResult::Failed() const {
  const SeverityCounts counts = CountSeverities(plan.findings);
  return counts.errors > 0 || (strict && counts.warnings > 0);
}

StatusOr<ActivationsResult> Activations(const std::shared_ptr<const Model>& model, const MeshOptions& mesh,
                                        const ActivationOptions& options) {
  EP_ASSIGN_OR_RETURN(const Checked<ActivationOptions> checked, Checked<ActivationOptions>::Of(options));
  return Activations(model, mesh, checked);
}

StatusOr<ActivationsResult> Activations(const std::shared_ptr<const Model>& model, const MeshOptions& mesh,
                                        const Checked<ActivationOptions>& options) {
  EP_RETURN_IF_ERROR(CheckOptionValue("max_devices", Json(mesh.max_devices)));
  EP_ASSIGN_OR_RETURN(const rules::Presets* presets, model->Presets());
  EP_ASSIGN_OR_RETURN(const planner::ActivationTable* table, model->ActivationTable());
  ActivationsResult result;
  EP_ASSIGN_OR_RETURN(Mesh built,
                      MeshFromOptions(mesh, model->options().devices, model->config(), true, &result.mesh_source));
  EP_ASSIGN_OR_RETURN(result.plan, BuildActivations(options, *table, *presets, model->resolved(), built));
  result.model_type = model->model_type();
  result.easydel_version = model->easydel_version().name;
  result.strict = model->options().strict;
  return result;
}

}  // namespace easyplan::api
