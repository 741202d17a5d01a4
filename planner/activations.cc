#include "planner/activations.h"

#include <fmt/format.h>

#include <utility>

namespace easyplan::planner {
namespace {

// ---- The steps of BuildActivationPlan ---------------------------------------------------------------

// The tokens of one step: `seq` keys per sequence; the query is one token in decode, else `seq`.
struct StepTokens {
  int64_t batch = 0, seq = 0, query_length = 0;
};

// Step 1: the mode's specs, raw (no shape, no mesh): the attention fields, the residual stream (whose
// presets pick decode rules by their integer mode when the query is one token) and, in training, the
// loss's logits and labels.
Status ResolveModeSpecs(const ActivationRequest& request, int64_t query_length, ActivationPlan& plan) {
  const rules::Presets& presets = *request.presets;
  const Json& config = *request.config;
  EP_ASSIGN_OR_RETURN(plan.attention, GetShardings(*request.table, presets, config, request.attention));
  for (const ActivationTable::ResidualEntry& entry : request.table->residual()) {
    if (entry.train_only) {
      if (request.attention.mode != Mode::kTrain) continue;
      EP_ASSIGN_OR_RETURN(PartitionSpec spec, ResolveAxes(entry.axes, presets, config, Mode::kTrain));
      (entry.name == "labels" ? plan.labels : plan.logits) = spec;
      continue;
    }
    const Mode axis_mode = entry.dynamic_dim && query_length == 1 ? Mode::kDecode : Mode::kTrain;
    EP_ASSIGN_OR_RETURN(PartitionSpec spec, ResolveAxes(entry.axes, presets, config, axis_mode));
    plan.residual.emplace_back(entry.name, std::move(spec));
  }
  return Status();
}

// Step 2: the attention kernel (easydel/operations/kernels/): its own mode from the query's shape, its
// own layout and mni, and the specs create_stable_sharding hands to shard_map; or the note saying why
// there is none.
Status ReportKernel(const ActivationRequest& request, const CacheGeometry& geometry, int64_t query_length,
                    ActivationPlan& plan) {
  std::string easydel_name, selected_by;
  EP_ASSIGN_OR_RETURN(const ActivationTable::Kernel* kernel,
                      SelectKernel(*request.table, *request.config, request.attention.mode, request.kernel,
                                   &easydel_name, &selected_by, &plan.kernel_note));
  if (!kernel) return Status();
  KernelStep step;
  step.mode = request.attention.mode;
  step.softmax_aux_ndim = request.attention.softmax_aux_ndim;
  step.batch = request.batch;
  step.seq = request.seq;
  step.query_length = query_length;
  step.heads = request.dims->heads;
  StatusOr<KernelReport> report =
      BuildKernelReport(*request.table, *request.presets, *request.config, request.mesh, *kernel, step, geometry);
  if (report.ok()) {
    report->easydel_name = easydel_name;
    report->selected_by = selected_by;
    plan.kernel = std::move(report).value();
  } else if (!request.kernel.empty() || report.status().kind() != ErrorKind::kBadInput) {
    return report.status();
  } else {
    // The config's own kernel cannot run this mode (a decode-only kernel asked to train): the parameter,
    // cache and residual specs still stand, so `memory`, `validate` and `export` go on and the kernel
    // section says why it is empty. Only an explicit --kernel makes it an error.
    plan.kernel_note = fmt::format("{} is {}: {}", selected_by, easydel_name, report.status().diag().message);
  }
  return Status();
}

// Step 3: the KV cache as stored (prefill rules) and as a decode step reads it (decode rules, bthd, no
// mni), and EasyDeL's cache switches.
Status ResolveCacheStep(const ActivationRequest& request, ActivationPlan& plan) {
  const Json& config = *request.config;
  EP_ASSIGN_OR_RETURN(CacheSpecs specs, ResolveCacheSpecs(*request.table, *request.presets, config));
  plan.cache_key = std::move(specs.key);
  plan.cache_value = std::move(specs.value);
  plan.cache_index = std::move(specs.index);
  plan.cache_decode_key = std::move(specs.decode_key);
  if (auto it = config.find("use_sharded_kv_caching"); it != config.end() && it->is_boolean()) {
    plan.use_sharded_kv_caching = it->get<bool>();
  }
  plan.kv_cache_sharding_sequence_axis_name = config.value("kv_cache_sharding_sequence_axis_name", Json("sp"));
  return Status();
}

// Step 4: the expert mesh and, for a MoE model, the expert specs and their findings.
Status PlanExperts(const ActivationRequest& request, ActivationPlan& plan, ActivationBuilder& builder) {
  const Json& config = *request.config;
  plan.expert_mesh = FoldExpertMesh(plan.mesh, ParallelAxisNamesOf(config), ExpertBindingOf(config));
  EP_ASSIGN_OR_RETURN(
      plan.experts, GetExpertSpecs(*request.table, *request.presets, config, request.dims->experts, plan.expert_mesh));
  for (Finding& finding : ExpertMeshFindings(plan.expert_mesh, plan.experts)) builder.Add(std::move(finding));
  return Status();
}

constexpr char kApplied[] = "eformer's correction";

// Step 5: one layer's attention tensors, hidden state and (in training) logits, with eformer's correction
// applied to their shapes.
Status LayStepTensors(const ActivationRequest& request, const CacheGeometry& geometry, const StepTokens& tokens,
                      ActivationPlan& plan, ActivationBuilder& builder) {
  const schemas::ModelDims& dims = *request.dims;
  if (dims.heads <= 0 || dims.hidden <= 0) {
    return Status::BadInput({"", "/num_attention_heads"},
                            "--batch/--seq need num_attention_heads and hidden_size in the config");
  }
  const int64_t batch = tokens.batch, heads = dims.heads;
  const bool bhtd = request.attention.layout == AttnLayout::kBhtd;
  auto attn_shape = [&](int64_t length, int64_t count, int64_t dim) {
    return bhtd ? Shape{batch, count, length, dim} : Shape{batch, length, count, dim};
  };
  const int64_t q_dim = geometry.key_dim;  // MLA queries carry the key's nope + rope dims
  const DType act = request.dtype;
  std::vector<ActivationTensor>& rows = plan.tensors;
  if (request.attention.mode == Mode::kDecode) {
    EP_ASSIGN_OR_RETURN(ActivationTensor q3, builder.Lay("attention.query3d", Shape{batch, heads, q_dim}, act,
                                                         plan.attention.query3d, kApplied));
    rows.push_back(std::move(q3));
  }
  // In decode the kernels read the whole cache as key and value; otherwise key/value are the new tokens.
  const int64_t kv_length = tokens.seq;
  EP_ASSIGN_OR_RETURN(ActivationTensor q, builder.Lay("attention.query", attn_shape(tokens.query_length, heads, q_dim),
                                                      act, plan.attention.query, kApplied));
  rows.push_back(std::move(q));
  EP_ASSIGN_OR_RETURN(ActivationTensor k,
                      builder.Lay("attention.key", attn_shape(kv_length, geometry.key_heads, geometry.key_dim), act,
                                  plan.attention.key, kApplied));
  rows.push_back(std::move(k));
  EP_ASSIGN_OR_RETURN(ActivationTensor v,
                      builder.Lay("attention.value", attn_shape(kv_length, geometry.value_heads, geometry.value_dim),
                                  act, plan.attention.value, kApplied));
  rows.push_back(std::move(v));
  EP_ASSIGN_OR_RETURN(ActivationTensor o,
                      builder.Lay("attention.output", attn_shape(tokens.query_length, heads, geometry.value_dim), act,
                                  plan.attention.output, kApplied));
  rows.push_back(std::move(o));
  for (const auto& [name, spec] : plan.residual) {
    if (name != "hidden_state") continue;
    EP_ASSIGN_OR_RETURN(ActivationTensor h, builder.Lay("hidden_state", Shape{batch, tokens.query_length, dims.hidden},
                                                        act, spec, kApplied));
    rows.push_back(std::move(h));
  }
  if (plan.logits && dims.vocab > 0) {
    EP_ASSIGN_OR_RETURN(ActivationTensor l, builder.Lay("logits", Shape{batch, tokens.query_length, dims.vocab}, act,
                                                        *plan.logits, kApplied));
    rows.push_back(std::move(l));
  }
  return Status();
}

// The cache specs the reshard finding compares: as stored, and as a decode step constrains the cache.
struct CacheLayouts {
  PartitionSpec stored, decode;
};

// Step 6: the TransformerCache (planner/kv_cache.h), one row group per distinct layer length (full
// layers, then each sliding window), sanitised for its shapes. The first group's specs become the plan's
// cache specs.
StatusOr<CacheLayouts> LayCache(const ActivationRequest& request, const CacheGeometry& geometry,
                                const StepTokens& tokens, ActivationPlan& plan, ActivationBuilder& builder) {
  const CacheSpecs specs{plan.cache_key, plan.cache_value, plan.cache_index, plan.cache_decode_key};
  EP_ASSIGN_OR_RETURN(LaidCache laid, LayTransformerCache(specs, geometry, tokens.batch, tokens.seq,
                                                          KvDType(*request.config, request.dtype), builder));
  for (ActivationTensor& row : laid.rows) plan.tensors.push_back(std::move(row));
  plan.cache_key = std::move(laid.specs.key);
  plan.cache_value = std::move(laid.specs.value);
  plan.cache_index = std::move(laid.specs.index);
  plan.cache_decode_key = std::move(laid.specs.decode_key);
  plan.cache_bytes = laid.bytes;
  plan.cache_bytes_per_device = laid.bytes_per_device;
  return CacheLayouts{std::move(laid.stored), std::move(laid.decode)};
}

// Step 7 (easydel/caching/ragged_page/cache.py, planner/ragged_cache.h): eSurge's RaggedPagesCache
// replaces the TransformerCache: its kv_pages rows replace the cache rows.
Status LayRaggedCache(const ActivationRequest& request, const CacheGeometry& geometry, bool has_shapes,
                      ActivationPlan& plan, ActivationBuilder& builder) {
  EP_ASSIGN_OR_RETURN(RaggedCacheReport ragged,
                      BuildRaggedCache(*request.table, *request.presets, *request.config, *request.ragged, geometry,
                                       KvDType(*request.config, request.dtype), builder));
  if (has_shapes) plan.tensors.push_back(ragged.pages);
  plan.cache_bytes = ragged.bytes;
  plan.cache_bytes_per_device = ragged.bytes_per_device;
  plan.ragged = std::move(ragged);
  return Status();
}

// Step 8: a decode step that constrains the cache to another layout than the one it is stored in makes
// XLA reshard the whole cache at every step.
void ReportCacheReshard(const ActivationRequest& request, const CacheLayouts& layouts, ActivationPlan& plan,
                        ActivationBuilder& builder) {
  plan.cache_reshard = !request.ragged && !SameLayout(layouts.stored, layouts.decode, plan.mesh);
  if (!plan.cache_reshard || !IsGenerationMode(request.attention.mode)) return;
  builder.Add(CacheReshardFinding(layouts.stored, layouts.decode));
}

}  // namespace

StatusOr<ActivationPlan> BuildActivationPlan(const ActivationRequest& request) {
  EP_CHECK(
      request.table != nullptr && request.presets != nullptr && request.config != nullptr && request.dims != nullptr,
      "BuildActivationPlan inputs");
  ActivationPlan plan;
  plan.attention_options = request.attention;
  plan.mesh = request.mesh;
  ActivationBuilder builder(plan.mesh, request.attention.mode);
  const bool has_shapes = request.batch.has_value() && request.seq.has_value();
  plan.has_shapes = has_shapes;
  StepTokens tokens;
  tokens.batch = request.batch.value_or(0);
  tokens.seq = request.seq.value_or(0);
  tokens.query_length = request.attention.mode == Mode::kDecode ? 1 : tokens.seq;
  const CacheGeometry geometry = CacheGeometryOf(*request.dims);

  EP_RETURN_IF_ERROR(ResolveModeSpecs(request, tokens.query_length, plan));
  EP_RETURN_IF_ERROR(ReportKernel(request, geometry, tokens.query_length, plan));
  EP_RETURN_IF_ERROR(ResolveCacheStep(request, plan));
  EP_RETURN_IF_ERROR(PlanExperts(request, plan, builder));
  CacheLayouts layouts{plan.cache_key, plan.cache_decode_key};
  if (has_shapes) {
    if (tokens.batch < 1 || tokens.seq < 1) return Status::BadInput({}, "--batch and --seq must be at least 1");
    EP_RETURN_IF_ERROR(LayStepTensors(request, geometry, tokens, plan, builder));
    if (!request.ragged) {
      EP_ASSIGN_OR_RETURN(layouts, LayCache(request, geometry, tokens, plan, builder));
    }
  }
  if (request.ragged) EP_RETURN_IF_ERROR(LayRaggedCache(request, geometry, has_shapes, plan, builder));
  ReportCacheReshard(request, layouts, plan, builder);
  plan.findings = builder.Take();
  return plan;
}

}  // namespace easyplan::planner
