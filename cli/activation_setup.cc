#include "cli/activation_setup.h"

#include "cli/config_flags.h"
#include "schemas/data_source.h"
#include "schemas/model_dims.h"

namespace easyplan::cli {

void AddActivationFlags(CLI::App* cmd, ActivationFlags& flags, bool full) {
  cmd->add_option("--mode", flags.mode,
                  full ? "runtime mode: train (default), prefill, decode or insert"
                       : "also check the activations of this runtime mode: train, prefill, decode or insert");
  cmd->add_option("--batch", flags.batch, "sequences per step: adds activation shapes, bytes and findings");
  cmd->add_option("--seq", flags.seq, "tokens per sequence (in decode: the KV cache length)");
  if (!full) return;
  cmd->add_option("--layout", flags.attention_layout, "attention layout: bthd (default) or bhtd (EasyDeL rejects thd)");
  cmd->add_flag("--qkv-mni", flags.qkv_mni, "qkv_mni_sharding: shard key/value by the query head axes");
  cmd->add_option("--softmax-aux-ndim", flags.softmax_aux_ndim,
                  "rank of the softmax aux (sinks), if the model has one");
  cmd->add_option("--dtype", flags.dtype, "activation dtype (default: the config's torch_dtype, else bfloat16)");
  cmd->add_option("--kernel", flags.kernel,
                  "attention kernel: vanilla, flash_attn2, sdpa, ring, blocksparse, decode or paged_flash (default: "
                  "the config's attn_mechanism, in decode its decode_attn_mechanism)");
  cmd->add_option("--cache", flags.cache, "KV cache: transformer (default) or ragged (eSurge's RaggedPagesCache)");
  cmd->add_option("--page-size", flags.page_size, "--cache ragged: tokens per page (default 128)");
  cmd->add_option("--num-pages", flags.num_pages,
                  "--cache ragged: pages per layer (required: EasyDeL sizes it from the free HBM at run time)");
  cmd->add_option("--cache-version", flags.cache_version, "--cache ragged: kv_pages layout v3 (default) or v2");
}

StatusOr<std::unique_ptr<planner::ActivationTable>> LoadActivationTable(Context& ctx, const std::string& schemas_dir) {
  const std::string dir = schemas_dir.empty() ? ctx.schemas_dir : schemas_dir;
  const schemas::DataSource source =
      dir.empty() ? schemas::DataSource::Embedded() : schemas::DataSource::Directory(dir, ctx.fs);
  const std::string path = "rules/_activations.yaml";
  EP_ASSIGN_OR_RETURN(Document doc, source.ReadDocument(path));
  EP_ASSIGN_OR_RETURN(planner::ActivationTable table, planner::ActivationTable::Parse(doc));
  return std::make_unique<planner::ActivationTable>(std::move(table));
}

Status CheckActivationFlags(const ActivationFlags& flags) {
  if (!flags.mode.empty()) {
    EP_RETURN_IF_ERROR(CheckChoice("--mode", flags.mode, {"train", "prefill", "decode", "insert"}));
  }
  EP_RETURN_IF_ERROR(planner::ParseAttnLayout(flags.attention_layout).status());
  if (flags.softmax_aux_ndim && *flags.softmax_aux_ndim < 1) {
    return Status::BadInput({}, "--softmax-aux-ndim " + std::to_string(*flags.softmax_aux_ndim) +
                                    " is not a rank: give 1 or more (2 for per-kv-head sinks)");
  }
  if (flags.batch.has_value() != flags.seq.has_value()) {
    return Status::BadInput({}, flags.batch ? "--batch needs --seq (the tokens per sequence)"
                                            : "--seq needs --batch (the sequences per step)");
  }
  if ((flags.batch && *flags.batch < 1) || (flags.seq && *flags.seq < 1)) {
    return Status::BadInput({}, "--batch and --seq must be at least 1");
  }
  EP_RETURN_IF_ERROR(CheckChoice("--cache", flags.cache, {"transformer", "ragged"}));
  if (flags.cache != "ragged") {
    for (const auto& [given, name] :
         {std::pair{flags.page_size.has_value(), "--page-size"}, std::pair{flags.num_pages.has_value(), "--num-pages"},
          std::pair{!flags.cache_version.empty(), "--cache-version"}}) {
      if (given) return Status::BadInput({}, std::string(name) + " needs --cache ragged");
    }
    return Status();
  }
  if (!flags.cache_version.empty()) {
    EP_RETURN_IF_ERROR(CheckChoice("--cache-version", flags.cache_version, {"v2", "v3"}));
  }
  if (flags.page_size && *flags.page_size < 1) return Status::BadInput({}, "--page-size must be at least 1");
  if (!flags.num_pages) {
    return Status::BadInput(
        {},
        "--cache ragged needs --num-pages N: EasyDeL sizes the page pool from the free HBM of the "
        "devices at run time, which an offline planner cannot know",
        {"eSurge sizes it as free_hbm * kv_head_shards * dp // (2 * layers * page_size * kv_heads * "
         "head_dim * bytes); pass the page count your server reports"});
  }
  if (*flags.num_pages < 1) return Status::BadInput({}, "--num-pages must be at least 1");
  return Status();
}

StatusOr<planner::ActivationPlan> BuildActivationsFromFlags(const ActivationFlags& flags,
                                                            const planner::ActivationTable& table,
                                                            const rules::Presets& presets, const Json& config,
                                                            const Mesh& mesh) {
  planner::ActivationRequest request;
  const std::string mode = flags.mode.empty() ? "train" : flags.mode;
  std::optional<planner::RuntimeMode> parsed = planner::ParseRuntimeMode(mode);
  if (!parsed) EP_RETURN_IF_ERROR(CheckChoice("--mode", mode, {"train", "prefill", "decode", "insert"}));
  request.attention.mode = *parsed;
  EP_ASSIGN_OR_RETURN(request.attention.layout, planner::ParseAttnLayout(flags.attention_layout));
  request.attention.qkv_mni = flags.qkv_mni;
  EP_RETURN_IF_ERROR(CheckActivationFlags(flags));
  request.attention.softmax_aux_ndim = flags.softmax_aux_ndim;
  request.kernel = flags.kernel;
  if (flags.cache == "ragged") {
    planner::RaggedCacheOptions ragged;
    ragged.version = flags.cache_version == "v2" ? 2 : 3;
    ragged.page_size = flags.page_size.value_or(128);
    ragged.num_pages = flags.num_pages.value_or(0);
    request.ragged = ragged;
  }
  request.batch = flags.batch;
  request.seq = flags.seq;
  EP_ASSIGN_OR_RETURN(const schemas::ModelDims dims, schemas::ModelDimsOf(config));
  std::string dtype = flags.dtype;
  if (dtype.empty()) dtype = dims.torch_dtype.empty() ? "bfloat16" : dims.torch_dtype;
  std::optional<DType> parsed_dtype = ParseDType(dtype);
  if (!parsed_dtype) {
    return Status::BadInput({}, "'" + dtype + "' is not a dtype name" +
                                    (flags.dtype.empty() ? " (the config's torch_dtype; pass --dtype)" : " (--dtype)"));
  }
  request.dtype = *parsed_dtype;
  request.table = &table;
  request.presets = &presets;
  request.config = &schemas::GeometryConfig(config);
  request.dims = &dims;
  request.mesh = mesh;
  return planner::BuildActivationPlan(request);
}

StatusOr<std::optional<ExpertReport>> ExpertReportOf(const planner::ActivationTable& table,
                                                     const rules::Presets& presets, const Json& config,
                                                     const Mesh& mesh) {
  const Json& model = schemas::GeometryConfig(config);
  EP_ASSIGN_OR_RETURN(const schemas::ModelDims dims, schemas::ModelDimsOf(config));
  ExpertReport report;
  report.mesh = planner::FoldExpertMesh(mesh, planner::ParallelAxisNamesOf(model), planner::ExpertBindingOf(model));
  EP_ASSIGN_OR_RETURN(std::optional<planner::ExpertSpecs> specs,
                      planner::GetExpertSpecs(table, presets, model, dims.experts, report.mesh));
  if (!specs) return std::optional<ExpertReport>();
  report.specs = std::move(*specs);
  return std::optional<ExpertReport>(std::move(report));
}

StatusOr<std::optional<ExpertReport>> ExpertReportForPlan(Context& ctx, const PlanInputs& inputs,
                                                          const std::string& schemas_dir) {
  EP_ASSIGN_OR_RETURN(std::unique_ptr<planner::ActivationTable> table, LoadActivationTable(ctx, schemas_dir));
  return ExpertReportOf(*table, *inputs.presets, inputs.resolved.config, inputs.mesh);
}

}  // namespace easyplan::cli
