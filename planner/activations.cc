#include "planner/activations.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <tuple>

#include "core/checked_math.h"
#include "planner/layout.h"
#include "planner/logical_check.h"
#include "rules/rule_set.h"

namespace easyplan::planner {
namespace {

using Axes = ActivationTable::Axes;

int64_t AxisProduct(const PartitionSpec::Entry& entry, const Mesh& mesh, std::string* unknown) {
  int64_t product = 1;
  for (const std::string& axis : entry) {
    const std::optional<int> index = mesh.AxisIndex(axis);
    if (!index) {
      if (unknown && unknown->empty()) *unknown = axis;
      continue;
    }
    product *= mesh.shape[static_cast<size_t>(*index)];  // the mesh's product does not overflow
  }
  return product;
}

std::string EntryAxesText(const PartitionSpec::Entry& entry, const Mesh& mesh) {
  std::vector<std::string> parts;
  int64_t product = 1;
  for (const std::string& axis : entry) {
    const std::optional<int> index = mesh.AxisIndex(axis);
    const int64_t size = index ? mesh.shape[static_cast<size_t>(*index)] : 1;
    parts.push_back(fmt::format("{}={}", axis, size));
    product *= size;
  }
  if (parts.size() == 1) return parts.front();
  return fmt::format("{} = {}", fmt::join(parts, " x "), product);
}

PartitionSpec Canonical(PartitionSpec spec) {
  std::vector<PartitionSpec::Entry> entries;
  for (const PartitionSpec::Entry& entry : spec.entries()) {
    PartitionSpec::Entry kept;
    for (const std::string& axis : entry) {
      if (!axis.empty()) kept.push_back(axis);  // JAX reads a falsy entry ("", ()) as None
    }
    entries.push_back(std::move(kept));
  }
  return PartitionSpec(std::move(entries));
}

// The entries of `spec` with size-1 axes removed and trailing Nones trimmed.
std::vector<PartitionSpec::Entry> Normalised(const PartitionSpec& spec, const Mesh& mesh) {
  std::vector<PartitionSpec::Entry> entries;
  for (const PartitionSpec::Entry& entry : spec.entries()) {
    PartitionSpec::Entry kept;
    for (const std::string& axis : entry) {
      const std::optional<int> index = mesh.AxisIndex(axis);
      if (index && mesh.shape[static_cast<size_t>(*index)] > 1) kept.push_back(axis);
    }
    entries.push_back(std::move(kept));
  }
  while (!entries.empty() && entries.back().empty()) entries.pop_back();
  return entries;
}

}  // namespace

std::string_view RuntimeModeName(RuntimeMode mode) {
  switch (mode) {
    case RuntimeMode::kTrain:
      return "train";
    case RuntimeMode::kPrefill:
      return "prefill";
    case RuntimeMode::kDecode:
      return "decode";
    case RuntimeMode::kInsert:
      return "insert";
  }
  return "train";
}

std::string_view RuntimeModeConstant(RuntimeMode mode) {
  switch (mode) {
    case RuntimeMode::kTrain:
      return "__train__";
    case RuntimeMode::kPrefill:
      return "__prefill__";
    case RuntimeMode::kDecode:
      return "__autoregressive__";
    case RuntimeMode::kInsert:
      return "__insert__";
  }
  return "__train__";
}

std::optional<RuntimeMode> ParseRuntimeMode(std::string_view text) {
  for (RuntimeMode mode : {RuntimeMode::kTrain, RuntimeMode::kPrefill, RuntimeMode::kDecode, RuntimeMode::kInsert}) {
    if (text == RuntimeModeName(mode) || text == RuntimeModeConstant(mode)) return mode;
  }
  return std::nullopt;
}

bool IsGenerationMode(RuntimeMode mode) { return mode == RuntimeMode::kDecode || mode == RuntimeMode::kInsert; }

rules::AxisMode AxisModeOf(RuntimeMode mode) {
  return IsGenerationMode(mode) ? rules::AxisMode::kGeneration : rules::AxisMode::kTrain;
}

std::string_view AttnLayoutName(AttnLayout layout) { return layout == AttnLayout::kBhtd ? "bhtd" : "bthd"; }

StatusOr<AttnLayout> ParseAttnLayout(std::string_view text) {
  if (text == "bthd") return AttnLayout::kBthd;
  if (text == "bhtd") return AttnLayout::kBhtd;
  if (text == "thd") {
    return Status::BadInput({},
                            "--layout thd is not implemented by EasyDeL: OperationMetadata.get_shardings raises "
                            "NotImplementedError(\"Layout 'thd' is not implemented\")",
                            {"use --layout bthd (the default) or bhtd"});
  }
  return Status::BadInput({}, "--layout '" + std::string(text) + "' is not an attention layout",
                          {"expected one of \"bthd\", \"bhtd\" (EasyDeL rejects \"thd\")"});
}

StatusOr<PartitionSpec> ResolveAxes(const Axes& axes, const rules::Presets& presets, const Json& config,
                                    rules::AxisMode mode) {
  rules::SpecSource source;
  source.dims = axes;
  EP_ASSIGN_OR_RETURN(PartitionSpec spec, presets.Resolve(source, config, mode));
  return Canonical(std::move(spec));
}

StatusOr<AttnShardingRules> GetShardings(const ActivationTable& table, const rules::Presets& presets,
                                         const Json& config, const AttnOptions& options) {
  const std::string layout(AttnLayoutName(options.layout));
  const rules::AxisMode mode = AxisModeOf(options.mode);
  auto axes_of = [&](const ActivationTable::AttnField& field) -> const Axes* {
    auto find = [&](const std::string& key) -> const Axes* {
      auto it = field.variants.find(key);
      return it == field.variants.end() ? nullptr : &it->second;
    };
    if (field.name == "softmax_aux" && options.softmax_aux_ndim == 2) {
      if (const Axes* axes = find("ndim2")) return axes;
    }
    if (options.qkv_mni) {
      if (const Axes* axes = find(layout + "_mni")) return axes;
    }
    if (const Axes* axes = find(layout)) return axes;
    return find("axes");
  };
  std::map<std::string, PartitionSpec> specs;
  for (const ActivationTable::AttnField& field : table.attention()) {
    if (!field.same_as.empty()) continue;
    const Axes* axes = axes_of(field);
    if (!axes) return Status::Internal("attention field " + field.name + " has no axes for layout " + layout);
    EP_ASSIGN_OR_RETURN(specs[field.name], ResolveAxes(*axes, presets, config, mode));
  }
  for (const ActivationTable::AttnField& field : table.attention()) {
    if (!field.same_as.empty()) specs[field.name] = specs[field.same_as];
  }
  AttnShardingRules rules;
  rules.query3d = specs["query3d"];
  rules.query = specs["query"];
  rules.key = specs["key"];
  rules.value = specs["value"];
  rules.bias = specs["bias"];
  rules.mask = specs["mask"];
  rules.output = specs["output"];
  rules.q_segment_ids = specs["q_segment_ids"];
  rules.kv_segment_ids = specs["kv_segment_ids"];
  if (options.softmax_aux_ndim) rules.softmax_aux = specs["softmax_aux"];
  return rules;
}

std::vector<std::pair<std::string, const PartitionSpec*>> AttnFields(const AttnShardingRules& rules) {
  return {{"query3d", &rules.query3d},
          {"query", &rules.query},
          {"key", &rules.key},
          {"value", &rules.value},
          {"bias", &rules.bias},
          {"mask", &rules.mask},
          {"output", &rules.output},
          {"q_segment_ids", &rules.q_segment_ids},
          {"kv_segment_ids", &rules.kv_segment_ids},
          {"softmax_aux", rules.softmax_aux ? &*rules.softmax_aux : nullptr}};
}

std::vector<std::string> KernelNames(const ActivationTable& table) {
  std::vector<std::string> names;
  for (const ActivationTable::Kernel& kernel : table.kernels()) {
    names.push_back(kernel.name);
    for (const std::string& alias : kernel.easydel) {
      if (alias != kernel.name) names.push_back(alias);
    }
  }
  return names;
}

namespace {

int64_t AlignUp(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// The kernel a run uses: --kernel, else FlexibleAttentionModule's choice (decode_attn_mechanism in
// MODE_DECODE when it is set, else attn_mechanism). `note` says why there is none.
StatusOr<const ActivationTable::Kernel*> SelectKernel(const ActivationTable& table, const Json& config,
                                                      RuntimeMode mode, const std::string& requested,
                                                      std::string* easydel_name, std::string* selected_by,
                                                      std::string* note) {
  if (!requested.empty()) {
    const ActivationTable::Kernel* kernel = table.FindKernel(requested);
    if (!kernel) {
      return Status::BadInput({}, "--kernel '" + requested + "' is not an attention kernel easyplan models",
                              {fmt::format("expected one of {}", fmt::join(KernelNames(table), ", "))});
    }
    *easydel_name = kernel->easydel.empty() ? kernel->name : kernel->easydel.front();
    *selected_by = "--kernel";
    return kernel;
  }
  auto mechanism = [&](const char* key) -> std::string {
    auto it = config.find(key);
    return it != config.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string name = mechanism("attn_mechanism");
  *selected_by = "attn_mechanism";
  if (mode == RuntimeMode::kDecode && !mechanism("decode_attn_mechanism").empty()) {
    name = mechanism("decode_attn_mechanism");
    *selected_by = "decode_attn_mechanism";
  }
  if (name.empty()) name = "vanilla";  // EasyDeL's default
  *easydel_name = name;
  if (name == "auto") {
    *note = fmt::format(
        "{} is auto: EasyDeL picks the kernel at run time from the platform (get_optimal_config); pass --kernel",
        *selected_by);
    return static_cast<const ActivationTable::Kernel*>(nullptr);
  }
  const ActivationTable::Kernel* kernel = table.FindKernel(name);
  if (!kernel) {
    *note = fmt::format("{} is {}, a kernel easyplan does not model; pass --kernel to see one that it does",
                        *selected_by, name);
  }
  return kernel;
}

}  // namespace

PartitionSpec SanitizeCacheSpec(const PartitionSpec& spec, const std::vector<Shape>& shapes, const Mesh& mesh,
                                std::string* unknown_axis) {
  std::vector<PartitionSpec::Entry> entries;
  for (int dim = 0; dim < spec.size(); ++dim) {
    const PartitionSpec::Entry& entry = spec[dim];
    const int64_t product = AxisProduct(entry, mesh, unknown_axis);
    bool keep = !entry.empty();
    for (const Shape& shape : shapes) {
      if (dim >= shape.rank() || shape[dim] % product != 0) keep = false;
    }
    entries.push_back(keep ? entry : PartitionSpec::Entry{});
  }
  return PartitionSpec(std::move(entries));
}

bool SameLayout(const PartitionSpec& a, const PartitionSpec& b, const Mesh& mesh) {
  return Normalised(a, mesh) == Normalised(b, mesh);
}

StatusOr<std::optional<ExpertSpecs>> GetExpertSpecs(const ActivationTable& table, const rules::Presets& presets,
                                                    const Json& config, int64_t experts,
                                                    const ExpertMesh& expert_mesh) {
  if (experts <= 0) return std::optional<ExpertSpecs>();
  ExpertSpecs specs;
  specs.experts = experts;
  auto etm = config.find("use_expert_tensor_mode");
  specs.expert_tensor_mode = etm != config.end() && etm->is_boolean() && etm->get<bool>();
  rules::SpecSource column;
  column.preset = "MoEColumnWise";
  rules::SpecSource row;
  row.preset = "MoERowWise";
  EP_ASSIGN_OR_RETURN(specs.column, presets.Resolve(column, config, rules::AxisMode::kTrain));
  EP_ASSIGN_OR_RETURN(specs.row, presets.Resolve(row, config, rules::AxisMode::kTrain));
  const std::string tp = ParallelAxisNamesOf(config).tp;
  // ED-HEAD biases: (place, tp) for both directions; (tp, None) in expert-tensor mode.
  const PartitionSpec::Entry place = specs.column.size() > 0 ? specs.column[0] : PartitionSpec::Entry{};
  specs.bias = specs.expert_tensor_mode ? PartitionSpec(std::vector<PartitionSpec::Entry>{{tp}, {}})
                                        : PartitionSpec(std::vector<PartitionSpec::Entry>{place, {tp}});
  for (const ActivationTable::FusedEntry& entry : table.fused()) {
    std::vector<PartitionSpec::Entry> entries;
    for (const std::optional<std::string>& role : specs.expert_tensor_mode ? entry.expert_tensor : entry.standard) {
      if (!role) {
        entries.emplace_back();
        continue;
      }
      const int group = *role == "dp" ? ExpertMesh::kDp : *role == "ep" ? ExpertMesh::kEp : ExpertMesh::kTp;
      entries.push_back({expert_mesh.axis_names[static_cast<size_t>(group)]});
    }
    specs.fused.emplace_back(entry.name, PartitionSpec(std::move(entries)));
  }
  EP_ASSIGN_OR_RETURN(specs.model_output, ResolveAxes(table.model_output(specs.expert_tensor_mode), presets, config,
                                                      rules::AxisMode::kTrain));
  return std::optional<ExpertSpecs>(std::move(specs));
}

std::vector<Finding> ExpertMeshFindings(const ExpertMesh& expert_mesh, const std::optional<ExpertSpecs>& specs) {
  std::vector<Finding> findings;
  if (!specs) return findings;
  auto add = [&](std::string message, std::vector<std::string> notes) {
    Finding finding;
    finding.code = FindingCode::kExpertMesh;
    finding.severity = FindingSeverity(finding.code);
    finding.message = std::move(message);
    finding.tensor = "expert_mesh";
    finding.notes = std::move(notes);
    findings.push_back(std::move(finding));
  };
  if (!expert_mesh.Covers()) {
    add(fmt::format("expert_mesh: the folded (dp, ep, tp) mesh ({}) has {} devices but the model mesh has {}, so "
                    "EasyDeL cannot reshape the devices into it",
                    expert_mesh.ToString(), expert_mesh.NumDevices(), expert_mesh.model_devices),
        {"every mesh axis must be one of partition_axis's data, fsdp, expert, tensor and sequence axes"});
    return findings;
  }
  if (specs->expert_tensor_mode && expert_mesh.shape[ExpertMesh::kTp] != 1) {
    add(fmt::format("expert_mesh: use_expert_tensor_mode needs the expert mesh's tp size to be 1, but it is {} ({}); "
                    "EasyDeL raises ValueError",
                    expert_mesh.shape[ExpertMesh::kTp], expert_mesh.ToString()),
        {"set the tensor-parallel axis to 1, or turn use_expert_tensor_mode off"});
  }
  const int group = specs->expert_tensor_mode ? ExpertMesh::kTp : ExpertMesh::kEp;
  const int64_t shards = expert_mesh.shape[static_cast<size_t>(group)];
  if (shards > 1 && specs->experts % shards != 0) {
    std::vector<int64_t> valid = Divisors(specs->experts);
    add(fmt::format("expert_mesh: {} experts cannot be dealt to the folded {} axis of size {} (from {}); the fused "
                    "MoE shard_map needs an even split",
                    specs->experts, expert_mesh.axis_names[static_cast<size_t>(group)], shards,
                    fmt::join(expert_mesh.members[static_cast<size_t>(group)], " x ")),
        {fmt::format("valid folded sizes: {}", fmt::join(valid, ", "))});
  }
  return findings;
}

bool IsCacheRow(std::string_view name) {
  return name.starts_with("kv_cache.") || name.starts_with("ragged_cache.") || name.starts_with("linear_state.");
}

CacheGeometry CacheGeometryOf(const schemas::ModelDims& dims) {
  CacheGeometry geometry;
  if (dims.mla()) {  // MLA: full heads, separate key and value dims
    geometry.mla = true;
    geometry.key_heads = geometry.value_heads = dims.heads;
    geometry.key_dim = dims.qk_nope_head_dim + dims.qk_rope_head_dim;
    geometry.value_dim = dims.v_head_dim;
  } else {
    geometry.key_heads = geometry.value_heads = dims.kv_heads > 0 ? dims.kv_heads : 1;
    // head_dim, else hidden / heads (which a config with fewer dims than heads makes 0), else 1.
    const bool known = dims.head_dim > 0 || (dims.hidden > 0 && dims.heads > 0);
    geometry.key_dim = geometry.value_dim = known ? dims.head_dim : 1;
  }
  geometry.layers = dims.layers;
  const size_t layers = static_cast<size_t>(geometry.layers);
  geometry.sliding.assign(layers, 0);
  geometry.chunked.assign(layers, false);
  geometry.linear.assign(layers, false);
  const int64_t window = dims.sliding_window;
  const bool typed = !dims.layer_types.empty() && dims.layer_types.size() == layers;
  if (typed) {
    for (size_t i = 0; i < layers; ++i) {
      const std::string& type = dims.layer_types[i];
      if (type == "sliding_attention" && window > 0) geometry.sliding[i] = window;
      if (type == "chunked_attention" && dims.attention_chunk_size > 0) {
        geometry.sliding[i] = dims.attention_chunk_size;
        geometry.chunked[i] = true;
      }
      if (type == "linear_attention") geometry.linear[i] = true;
    }
  } else if (window > 0 && dims.use_sliding_window) {
    std::fill(geometry.sliding.begin(), geometry.sliding.end(), window);
  }
  const int64_t linear_layers = std::count(geometry.linear.begin(), geometry.linear.end(), true);
  geometry.kv_layers = geometry.layers - linear_layers;
  if (linear_layers > 0) {
    LinearStateGeometry& state = geometry.linear_state;
    state.layers = linear_layers;
    state.value_heads = std::max<int64_t>(dims.linear_value_heads, 1);
    state.key_dim = std::max<int64_t>(dims.linear_key_dim, 1);
    state.value_dim = std::max<int64_t>(dims.linear_value_dim, 1);
    state.conv_kernel = std::max<int64_t>(dims.linear_conv_kernel, 1);
    // Overflow-safe: each factor is a config integer; the products are checked where they are laid.
    const std::optional<int64_t> keys = CheckedMul(std::max<int64_t>(dims.linear_key_heads, 1), state.key_dim);
    const std::optional<int64_t> values = CheckedMul(state.value_heads, state.value_dim);
    const std::optional<int64_t> twice = keys ? CheckedMul(*keys, 2) : std::nullopt;
    const std::optional<int64_t> conv = twice && values ? CheckedAdd(*twice, *values) : std::nullopt;
    state.conv_dim = conv.value_or(std::numeric_limits<int64_t>::max());
  }
  return geometry;
}

namespace {

struct Builder {
  ActivationPlan& plan;
  FindingList findings;
  // Uneven entries aggregate over tensors by (dim, axes, dim size): a batch of 1 over fsdp is one
  // finding naming the first tensor and counting the others.
  std::vector<Finding> uneven;
  std::map<std::string, size_t> uneven_index;

  void AddUneven(Finding finding, const std::string& key) {
    auto [it, inserted] = uneven_index.try_emplace(key, uneven.size());
    if (!inserted) {
      uneven[it->second].count += finding.count;
      return;
    }
    finding.severity = FindingSeverity(finding.code);
    uneven.push_back(std::move(finding));
  }

  std::vector<Finding> Take() {
    for (Finding& finding : uneven) findings.Add(std::move(finding));
    uneven.clear();
    return findings.Take();
  }

  // One tensor of the plan: the effective spec (eformer's correction), its shards, and findings for
  // the entries the correction drops.
  StatusOr<ActivationTensor> Lay(const std::string& name, Shape shape, DType dtype, const PartitionSpec& spec,
                                 const std::string& what) {
    ActivationTensor tensor;
    tensor.name = name;
    tensor.shape = shape;
    tensor.dtype = dtype;
    tensor.spec = spec;
    CorrectedSpec corrected = CorrectSpec(shape, spec, plan.mesh, UnevenMode::kReplicate);
    tensor.effective = corrected.spec;
    for (const SpecIssue& issue : corrected.issues) Report(name, shape, spec, issue, what);
    EP_RETURN_IF_ERROR(Measure(tensor));
    return tensor;
  }

  Status Measure(ActivationTensor& tensor) {
    auto layout = TensorLayout::Make(tensor.shape, tensor.effective, plan.mesh, UnevenMode::kReplicate);
    tensor.shard_shape = layout.ok() ? layout->shard_shape() : tensor.shape;
    const std::optional<int64_t> elements = tensor.shape.NumElements();
    const std::optional<int64_t> shard_elements = tensor.shard_shape.NumElements();
    std::optional<int64_t> bytes = elements ? ByteSize(*elements, DTypeBits(tensor.dtype)) : std::nullopt;
    std::optional<int64_t> shard = shard_elements ? ByteSize(*shard_elements, DTypeBits(tensor.dtype)) : std::nullopt;
    if (!bytes || !shard) return Status::BadInput({}, tensor.name + " " + tensor.shape.ToString() + " overflows int64");
    tensor.bytes = *bytes;
    tensor.bytes_per_device = *shard;
    return Status();
  }

  void Report(const std::string& name, const Shape& shape, const PartitionSpec& spec, const SpecIssue& issue,
              const std::string& what) {
    Finding finding;
    finding.tensor = name;
    finding.count = 1;
    const std::string label =
        fmt::format("{} {} {}", RuntimeModeName(plan.attention_options.mode), name, shape.ToString());
    switch (issue.kind) {
      case SpecIssue::Kind::kUnknownAxis:
        finding.code = FindingCode::kUnknownAxis;
        finding.message = fmt::format(
            "{}: {} names mesh axis '{}', which the mesh ({}) does not have, so {} drops "
            "the entry",
            label, spec.ToString(), issue.axis, plan.mesh.ToString(), what);
        AddUneven(std::move(finding), fmt::format("unknown|{}|{}", what, issue.axis));
        return;
      case SpecIssue::Kind::kDuplicateAxis:
        finding.code = FindingCode::kDuplicateAxis;
        finding.message = fmt::format("{}: {} uses mesh axis '{}' twice", label, spec.ToString(), issue.axis);
        findings.Add(std::move(finding), issue.dim, issue.axis);
        return;
      case SpecIssue::Kind::kUnevenReplaced:
      case SpecIssue::Kind::kIndivisible:
      case SpecIssue::Kind::kUnevenChunked: {
        finding.code = FindingCode::kUnevenReplaced;
        finding.message = fmt::format("{}: dim {} ({}) is not divisible by {}, so {} leaves it unsharded", label,
                                      issue.dim, issue.dim_size, EntryAxesText(spec[issue.dim], plan.mesh), what);
        finding.notes.push_back(fmt::format("dim {} shards over {} when it is a multiple of {}", issue.dim,
                                            fmt::join(spec[issue.dim], " x "), issue.partitions));
        AddUneven(std::move(finding),
                  fmt::format("{}|{}|{}|{}", what, issue.dim, fmt::join(spec[issue.dim], ","), issue.dim_size));
        return;
      }
      case SpecIssue::Kind::kTruncated:
        return;
    }
  }
};

// What `kernel` (easydel/operations/kernels/) does with the shardings for this request's query and key shapes.
StatusOr<KernelReport> BuildKernelReport(const ActivationRequest& request, const CacheGeometry& geometry,
                                         const ActivationTable::Kernel& kernel, int64_t query_length) {
  const ActivationTable& table = *request.table;
  const rules::Presets& presets = *request.presets;
  const Json& config = *request.config;
  KernelReport report;
  report.name = kernel.name;
  report.mode_dim = kernel.mode_dim;
  report.layout = kernel.layout == "bhtd" ? AttnLayout::kBhtd : AttnLayout::kBthd;
  report.qkv_mni = kernel.qkv_mni;
  report.shard_map = kernel.shard_map;
  report.transposed = kernel.transposed;
  const std::optional<int64_t> heads =
      request.dims->heads > 0 ? std::optional<int64_t>(request.dims->heads) : std::nullopt;
  // get_mode(query, BTHD=True) looks at query.shape[1]: the query length (1 in decode; --seq, or more
  // than 1 when it is not given, otherwise). Ring and blocksparse test shape[2], the head count.
  if (kernel.mode_dim == 1) {
    if (request.attention.mode == RuntimeMode::kDecode || request.seq) report.tested = query_length;
  } else {
    report.tested = heads;
  }
  report.kernel_mode = report.tested == 1 ? RuntimeMode::kDecode : RuntimeMode::kTrain;
  if (kernel.decode_only && report.kernel_mode != RuntimeMode::kDecode) {
    return Status::BadInput(
        {},
        fmt::format("the {} kernel ({}) runs only in decode: with a query of length {} EasyDeL raises "
                    "ValueError(\"{}\")",
                    kernel.name, kernel.easydel.empty() ? kernel.name : kernel.easydel.front(),
                    report.tested ? std::to_string(*report.tested) : "more than 1", kernel.error),
        {"use --mode decode, or a kernel for the prompt (attn_mechanism)"});
  }
  AttnOptions options;
  options.mode = report.kernel_mode;
  options.layout = report.layout;
  options.qkv_mni = kernel.qkv_mni;
  options.softmax_aux_ndim = request.attention.softmax_aux_ndim;
  EP_ASSIGN_OR_RETURN(AttnShardingRules rules, GetShardings(table, presets, config, options));
  AttnOptions flat = options;
  if (flat.softmax_aux_ndim) flat.softmax_aux_ndim = 1;
  EP_ASSIGN_OR_RETURN(AttnShardingRules flat_rules, GetShardings(table, presets, config, flat));
  auto field_spec = [&](const std::string& name, bool flatten) -> const PartitionSpec* {
    for (const auto& [field, spec] : AttnFields(flatten ? flat_rules : rules)) {
      if (field == name) return spec;
    }
    return nullptr;
  };

  // The tensors' shapes, with --batch/--seq.
  std::map<std::string, Shape> shapes;
  if (request.batch && request.seq && heads) {
    const int64_t batch = *request.batch, kv_length = *request.seq;
    auto four = [&](int64_t length, int64_t count, int64_t dim) {
      return kernel.transposed ? Shape{batch, count, length, dim} : Shape{batch, length, count, dim};
    };
    shapes["query"] = four(query_length, *heads, geometry.key_dim);
    shapes["key"] = four(kv_length, geometry.key_heads, geometry.key_dim);
    shapes["value"] = four(kv_length, geometry.value_heads, geometry.value_dim);
    shapes["output"] = four(query_length, *heads, geometry.value_dim);
    shapes["query3d"] = Shape{batch, *heads, geometry.key_dim};
    shapes["bias"] = Shape{batch, *heads, query_length, kv_length};
    shapes["batch"] = Shape{batch};
  }
  for (const ActivationTable::KernelSpec& entry : kernel.specs) {
    KernelSpecReport spec;
    spec.name = entry.name;
    if (entry.field.empty()) {
      spec.spec = PartitionSpec(std::vector<PartitionSpec::Entry>(static_cast<size_t>(entry.rank)));
    } else {
      const PartitionSpec* source = field_spec(entry.field, entry.flatten);
      if (!source) continue;  // no softmax aux: the kernel passes None
      std::vector<PartitionSpec::Entry> entries;
      if (!entry.pick.empty()) {
        for (int dim : entry.pick) entries.push_back(dim < source->size() ? (*source)[dim] : PartitionSpec::Entry{});
      } else {
        entries = source->entries();
        if (entry.keep) {
          for (int dim = 0; dim < static_cast<int>(entries.size()); ++dim) {
            if (std::find(entry.keep->begin(), entry.keep->end(), dim) == entry.keep->end()) entries[dim].clear();
          }
        }
      }
      spec.spec = PartitionSpec(std::move(entries));
    }
    spec.applied = spec.spec;
    spec.corrected = kernel.corrected && !entry.tensor.empty();
    if (auto it = shapes.find(entry.tensor); it != shapes.end()) {
      spec.shape = it->second;
      if (spec.corrected) spec.applied = CorrectSpec(it->second, spec.spec, request.mesh, UnevenMode::kReplicate).spec;
    }
    report.specs.push_back(std::move(spec));
  }
  return report;
}

// The mesh size of a partition_axis attribute's value (a name, a list of names, or null = 1).
int64_t AttributeMeshSize(const Json& config, const std::string& attribute, const Mesh& mesh) {
  auto axis = config.find("partition_axis");
  if (axis == config.end() || !axis->is_object()) return 1;
  auto value = axis->find(attribute);
  if (value == axis->end()) return 1;
  PartitionSpec::Entry entry;
  if (value->is_string()) entry.push_back(value->get<std::string>());
  if (value->is_array()) {
    for (const Json& name : *value) {
      if (name.is_string()) entry.push_back(name.get<std::string>());
    }
  }
  return AxisProduct(entry, mesh, nullptr);
}

// One layer's kv_pages of a RaggedPagesCache (easydel/caching/ragged_page/cache.py) and the ragged kernel's specs.
StatusOr<RaggedCacheReport> BuildRaggedCache(Builder& builder, const ActivationRequest& request,
                                             const CacheGeometry& geometry, DType kvdtype) {
  const ActivationTable& table = *request.table;
  const rules::Presets& presets = *request.presets;
  const Json& config = *request.config;
  const RaggedCacheOptions& options = *request.ragged;
  const Mesh& mesh = request.mesh;
  if (options.version != 2 && options.version != 3) {
    return Status::BadInput({}, fmt::format("--cache-version v{} is not a RaggedPagesCache version", options.version),
                            {"expected v2 or v3 (the default)"});
  }
  if (options.page_size < 1) return Status::BadInput({}, "--page-size must be at least 1");
  if (options.num_pages < 1) {
    return Status::BadInput({},
                            "--cache ragged needs --num-pages N: EasyDeL sizes the page pool from the free HBM of "
                            "the devices at run time, which an offline planner cannot know",
                            {"eSurge's pool is free_hbm * kv_head_shards * dp // (2 * layers * page_size * kv_heads "
                             "* head_dim * bytes), rounded down to a multiple of dp"});
  }
  if (geometry.mla) {
    return Status::BadInput({},
                            "--cache ragged: MLA configs use EasyDeL's multi-latent pages cache, which easyplan "
                            "does not model");
  }
  const ActivationTable::RaggedCacheAxes& axes = table.ragged_cache();
  RaggedCacheReport report;
  report.options = options;
  report.kv_heads = geometry.key_heads;
  report.head_dim = geometry.key_dim;
  report.layers = geometry.kv_layers;
  report.requested_dtype = report.dtype = kvdtype;

  // Sizes: the page axis's data-parallel size, and the shard count kv_head_axis asks for.
  EP_ASSIGN_OR_RETURN(PartitionSpec page, ResolveAxes(axes.page, presets, config, rules::AxisMode::kTrain));
  EP_ASSIGN_OR_RETURN(PartitionSpec head, ResolveAxes(axes.head_group, presets, config, rules::AxisMode::kTrain));
  std::string unknown;
  report.dp_size = page.size() > 0 ? AxisProduct(page[0], mesh, &unknown) : 1;
  report.kv_head_axis_size = AttributeMeshSize(config, axes.shard_count_from, mesh);
  if (options.num_pages % report.dp_size != 0) {
    return Status::BadInput(
        {},
        fmt::format("--num-pages {} is not a multiple of the data-parallel size {}: EasyDeL "
                    "rounds the page count down to a multiple of it",
                    options.num_pages, report.dp_size),
        {fmt::format("use {}",
                     std::max<int64_t>(report.dp_size, options.num_pages / report.dp_size * report.dp_size))});
  }
  const int64_t kvh = report.kv_heads, head_dim = report.head_dim;
  int64_t shards = report.kv_head_axis_size;
  Shape shape;
  if (options.version == 2) {
    if (shards > 1 && (2 * kvh) % shards != 0) {
      shards = 1;
      report.heads_replicated = true;
    }
    shape = Shape{options.num_pages, options.page_size, 2 * kvh, head_dim};
  } else {
    struct V3 {
      int64_t packing = 1, combined = 0, groups = 0;
    };
    auto geometry_of = [&](DType dtype) -> std::optional<V3> {
      const int bits = DTypeBits(dtype);
      if (bits <= 0 || bits > 32) return std::nullopt;
      V3 v3;
      v3.packing = 32 / bits;
      v3.combined = AlignUp(head_dim == 64 ? kvh : 2 * kvh, v3.packing);
      v3.groups = v3.combined / v3.packing;
      return v3;
    };
    std::optional<V3> v3 = geometry_of(kvdtype);
    if (!v3) {
      return Status::BadInput({}, fmt::format("--cache ragged v3 packs 32-bit words, so kvdtype {} (wider than 32 "
                                              "bits) cannot be stored",
                                              DTypeName(kvdtype)));
    }
    if (shards > 1 && v3->groups % shards != 0) {
      bool found = false;
      for (const std::string& name : axes.upcast) {
        const std::optional<DType> candidate = ParseDType(name);
        if (!candidate || *candidate == kvdtype) continue;
        const std::optional<V3> trial = geometry_of(*candidate);
        if (trial && trial->groups % shards == 0) {
          report.dtype = *candidate;
          report.upcast = true;
          v3 = trial;
          found = true;
          break;
        }
      }
      if (!found) {
        shards = 1;
        report.heads_replicated = true;
      }
    }
    report.packing = v3->packing;
    report.combined_heads = v3->combined;
    report.groups = v3->groups;
    report.head_dim_pad = head_dim == 64 ? 128 : AlignUp(head_dim, 128);
    shape = Shape{options.num_pages, options.page_size, report.groups, report.packing, report.head_dim_pad};
  }
  report.kv_head_shards = shards;

  std::vector<PartitionSpec::Entry> entries(static_cast<size_t>(shape.rank()));
  if (report.dp_size > 1 && page.size() > 0) entries[0] = page[0];
  if (shards > 1 && head.size() > 0) entries[2] = head[0];
  EP_ASSIGN_OR_RETURN(report.pages, builder.Lay("ragged_cache.kv_pages", shape, report.dtype,
                                                PartitionSpec(std::move(entries)), "the ragged cache"));
  report.pages.layers = geometry.kv_layers;  // linear-attention layers keep no pages
  const int64_t layers = std::max<int64_t>(geometry.kv_layers, 1);
  auto bytes = CheckedMul(report.pages.bytes, layers);
  auto per_device = CheckedMul(report.pages.bytes_per_device, layers);
  if (!bytes || !per_device) return Status::BadInput({}, "the ragged cache's size overflows int64");
  report.bytes = *bytes;
  report.bytes_per_device = *per_device;

  EP_ASSIGN_OR_RETURN(report.query, ResolveAxes(axes.query, presets, config, rules::AxisMode::kTrain));
  EP_ASSIGN_OR_RETURN(report.kv, ResolveAxes(axes.kv, presets, config, rules::AxisMode::kTrain));
  if (shards <= 1) report.kv = PartitionSpec(std::vector<PartitionSpec::Entry>(report.kv.entries().size()));
  EP_ASSIGN_OR_RETURN(report.sinks, ResolveAxes(axes.sinks, presets, config, rules::AxisMode::kTrain));
  return report;
}

// ---- The steps of BuildActivationPlan ---------------------------------------------------------------

// The tokens of one step: `seq` keys per sequence; the query is one token in decode, else `seq`.
struct StepTokens {
  int64_t batch = 0, seq = 0, query_length = 0;
};

// The cache's storage dtype: the config's kvdtype, else the activation dtype.
DType KvDType(const Json& config, DType activation) {
  auto name = config.find("kvdtype");
  if (name != config.end() && name->is_string()) {
    if (std::optional<DType> parsed = ParseDType(name->get<std::string>())) return *parsed;
  }
  return activation;
}

// Step 1: the mode's specs, raw (no shape, no mesh): the attention fields, the residual stream (whose
// presets pick decode rules by their integer mode when the query is one token) and, in training, the
// loss's logits and labels.
Status ResolveModeSpecs(const ActivationRequest& request, int64_t query_length, ActivationPlan& plan) {
  const rules::Presets& presets = *request.presets;
  const Json& config = *request.config;
  EP_ASSIGN_OR_RETURN(plan.attention, GetShardings(*request.table, presets, config, request.attention));
  for (const ActivationTable::ResidualEntry& entry : request.table->residual()) {
    if (entry.train_only) {
      if (request.attention.mode != RuntimeMode::kTrain) continue;
      EP_ASSIGN_OR_RETURN(PartitionSpec spec, ResolveAxes(entry.axes, presets, config, rules::AxisMode::kTrain));
      (entry.name == "labels" ? plan.labels : plan.logits) = spec;
      continue;
    }
    const rules::AxisMode axis_mode =
        entry.dynamic_dim && query_length == 1 ? rules::AxisMode::kGeneration : rules::AxisMode::kTrain;
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
  StatusOr<KernelReport> report = BuildKernelReport(request, geometry, *kernel, query_length);
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
Status ResolveCacheSpecs(const ActivationRequest& request, ActivationPlan& plan) {
  const ActivationTable& table = *request.table;
  const rules::Presets& presets = *request.presets;
  const Json& config = *request.config;
  EP_ASSIGN_OR_RETURN(plan.cache_key, ResolveAxes(*table.FindCache("key"), presets, config, rules::AxisMode::kTrain));
  EP_ASSIGN_OR_RETURN(plan.cache_value,
                      ResolveAxes(*table.FindCache("value"), presets, config, rules::AxisMode::kTrain));
  EP_ASSIGN_OR_RETURN(plan.cache_index,
                      ResolveAxes(*table.FindCache("indexs"), presets, config, rules::AxisMode::kTrain));
  AttnOptions decode_options;
  decode_options.mode = RuntimeMode::kDecode;
  EP_ASSIGN_OR_RETURN(AttnShardingRules decode_rules, GetShardings(table, presets, config, decode_options));
  plan.cache_decode_key = decode_rules.key;
  if (auto it = config.find("use_sharded_kv_caching"); it != config.end() && it->is_boolean()) {
    plan.use_sharded_kv_caching = it->get<bool>();
  }
  plan.kv_cache_sharding_sequence_axis_name = config.value("kv_cache_sharding_sequence_axis_name", Json("sp"));
  return Status();
}

// Step 4: the expert mesh and, for a MoE model, the expert specs and their findings.
Status PlanExperts(const ActivationRequest& request, Builder& builder) {
  ActivationPlan& plan = builder.plan;
  const Json& config = *request.config;
  plan.expert_mesh = FoldExpertMesh(plan.mesh, ParallelAxisNamesOf(config), ExpertBindingOf(config));
  EP_ASSIGN_OR_RETURN(
      plan.experts, GetExpertSpecs(*request.table, *request.presets, config, request.dims->experts, plan.expert_mesh));
  for (Finding& finding : ExpertMeshFindings(plan.expert_mesh, plan.experts)) builder.findings.Add(std::move(finding));
  return Status();
}

constexpr char kApplied[] = "eformer's correction";
constexpr char kSanitiser[] = "the cache sanitiser";

// Step 5: one layer's attention tensors, hidden state and (in training) logits, with eformer's correction
// applied to their shapes.
Status LayStepTensors(const ActivationRequest& request, const CacheGeometry& geometry, const StepTokens& tokens,
                      Builder& builder) {
  const schemas::ModelDims& dims = *request.dims;
  ActivationPlan& plan = builder.plan;
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
  if (request.attention.mode == RuntimeMode::kDecode) {
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

// Findings for the entries of the stored cache spec that the sanitiser drops for `key_shape` (once per
// dim, counted over the layers), and for an axis the mesh lacks.
void ReportCacheSanitiser(const PartitionSpec& stored, const std::string& unknown, const Shape& key_shape,
                          const Shape& value_shape, int64_t layers, Builder& builder) {
  const ActivationPlan& plan = builder.plan;
  if (!unknown.empty()) {
    Finding finding;
    finding.code = FindingCode::kUnknownAxis;
    finding.tensor = "kv_cache.key";
    finding.count = 1;
    finding.message = fmt::format(
        "kv_cache.key {}: {} names mesh axis '{}', which the mesh ({}) does not have; "
        "EasyDeL's cache sanitiser raises KeyError",
        key_shape.ToString(), plan.cache_key.ToString(), unknown, plan.mesh.ToString());
    builder.findings.Add(std::move(finding), -1, unknown);
  }
  for (int dim = 0; dim < plan.cache_key.size() && dim < 4; ++dim) {
    const PartitionSpec::Entry& entry = plan.cache_key[dim];
    if (entry.empty() || !stored[dim].empty()) continue;
    const int64_t product = AxisProduct(entry, plan.mesh, nullptr);
    const int64_t size = key_shape[dim] % product != 0 ? key_shape[dim] : value_shape[dim];
    Finding finding;
    finding.code = FindingCode::kUnevenReplaced;
    finding.tensor = "kv_cache.key";
    finding.count = std::max<int64_t>(layers, 1);
    finding.message = fmt::format("kv_cache.key {}: dim {} ({}) is not divisible by {}, so {} leaves it unsharded",
                                  key_shape.ToString(), dim, size, EntryAxesText(entry, plan.mesh), kSanitiser);
    finding.notes.push_back(
        fmt::format("dim {} shards over {} when it is a multiple of {}", dim, fmt::join(entry, " x "), product));
    builder.AddUneven(std::move(finding), fmt::format("cache|{}|{}|{}", dim, fmt::join(entry, ","), size));
  }
}

// Step 6: the TransformerCache, one row group per distinct layer length (full layers, then each sliding
// window), sanitised for its shapes. The first group's specs become the plan's cache specs.
StatusOr<CacheLayouts> LayTransformerCache(const CacheGeometry& geometry, const StepTokens& tokens, DType kvdtype,
                                           Builder& builder) {
  ActivationPlan& plan = builder.plan;
  const int64_t batch = tokens.batch, seq = tokens.seq;
  CacheLayouts layouts{plan.cache_key, plan.cache_decode_key};
  // (length, chunked) -> layers; linear-attention layers keep no keys or values.
  std::map<std::pair<int64_t, bool>, int64_t> layers_by_length;
  for (size_t i = 0; i < geometry.sliding.size(); ++i) {
    if (geometry.linear[i]) continue;
    const int64_t window = geometry.sliding[i];
    ++layers_by_length[{window > 0 ? std::min(window, seq) : seq, window > 0 && geometry.chunked[i]}];
  }
  if (geometry.kv_layers == 0) layers_by_length[{seq, false}] = 0;
  // (length, chunked, layers), the full length first
  std::vector<std::tuple<int64_t, bool, int64_t>> groups;
  if (auto full = layers_by_length.find({seq, false}); full != layers_by_length.end()) {
    groups.emplace_back(seq, false, full->second);
  }
  for (const auto& [key, layers] : layers_by_length) {
    if (key != std::pair<int64_t, bool>{seq, false}) groups.emplace_back(key.first, key.second, layers);
  }
  int64_t total = 0, total_per_device = 0;
  auto add_rows = [&](ActivationTensor& row, int64_t layers) -> Status {
    EP_RETURN_IF_ERROR(builder.Measure(row));
    auto layer_bytes = CheckedMul(row.bytes, std::max<int64_t>(layers, 1));
    auto layer_device = CheckedMul(row.bytes_per_device, std::max<int64_t>(layers, 1));
    auto sum = layer_bytes ? CheckedAdd(total, *layer_bytes) : std::nullopt;
    auto sum_device = layer_device ? CheckedAdd(total_per_device, *layer_device) : std::nullopt;
    if (!sum || !sum_device) return Status::BadInput({}, "the KV cache's size overflows int64");
    total = *sum;
    total_per_device = *sum_device;
    return Status();
  };
  bool first_group = true;
  for (const auto& [length, chunked, layers] : groups) {
    const Shape key_shape{batch, length, geometry.key_heads, geometry.key_dim};
    const Shape value_shape{batch, length, geometry.value_heads, geometry.value_dim};
    std::string unknown;
    const PartitionSpec stored = SanitizeCacheSpec(plan.cache_key, {key_shape, value_shape}, plan.mesh, &unknown);
    ReportCacheSanitiser(stored, unknown, key_shape, value_shape, layers, builder);
    const PartitionSpec index_spec =
        SanitizeCacheSpec(plan.cache_index, {Shape{batch}}, plan.mesh, nullptr).entries().front().empty()
            ? PartitionSpec(std::vector<PartitionSpec::Entry>(1))
            : plan.cache_index;
    const PartitionSpec stored_value = stored;  // the same sanitised axes for K and V
    const int64_t window = length == seq && first_group ? 0 : length;
    const std::string suffix = window > 0 ? fmt::format("[{} {}]", chunked ? "chunked" : "sliding", window) : "";
    ActivationTensor key_row{"kv_cache.key" + suffix, key_shape, kvdtype, plan.cache_key, stored};
    ActivationTensor value_row{"kv_cache.value" + suffix, value_shape, kvdtype, plan.cache_value, stored_value};
    ActivationTensor indexs_row{"kv_cache.indexs" + suffix, Shape{batch}, DType::kInt32, plan.cache_index, index_spec};
    ActivationTensor starts_row{"kv_cache.starts" + suffix, Shape{batch}, DType::kInt32, plan.cache_index, index_spec};
    for (ActivationTensor* row : {&key_row, &value_row, &indexs_row, &starts_row}) {
      row->layers = layers;
      row->window = window;
      EP_RETURN_IF_ERROR(add_rows(*row, layers));
      plan.tensors.push_back(std::move(*row));
    }
    if (first_group) {
      layouts.stored = stored;
      layouts.decode = CorrectSpec(key_shape, plan.cache_decode_key, plan.mesh, UnevenMode::kReplicate).spec;
      plan.cache_decode_key = layouts.decode;
      plan.cache_key = stored;
      plan.cache_value = stored;
      plan.cache_index = index_spec;
    }
    first_group = false;
  }
  // Linear-attention layers (Qwen3-Next) keep a state of fixed size whatever the sequence length. Its
  // batch dim follows the cache's indexs (the batch axes when they divide the batch); easyplan knows no
  // EasyDeL spec for the rest, so the state is counted whole on every device of a batch shard.
  if (const LinearStateGeometry& state = geometry.linear_state; state.layers > 0) {
    PartitionSpec::Entry batch_entry =
        plan.cache_index.entries().empty() ? PartitionSpec::Entry() : plan.cache_index.entries().front();
    const PartitionSpec conv_spec(std::vector<PartitionSpec::Entry>{batch_entry, {}, {}});
    const PartitionSpec recurrent_spec(std::vector<PartitionSpec::Entry>{batch_entry, {}, {}, {}});
    ActivationTensor conv{"linear_state.conv", Shape{batch, state.conv_dim, state.conv_kernel}, kvdtype, conv_spec,
                          conv_spec};
    ActivationTensor recurrent{"linear_state.recurrent",
                               Shape{batch, state.value_heads, state.key_dim, state.value_dim}, DType::kFloat32,
                               recurrent_spec, recurrent_spec};
    for (ActivationTensor* row : {&conv, &recurrent}) {
      row->layers = state.layers;
      EP_RETURN_IF_ERROR(add_rows(*row, state.layers));
      plan.tensors.push_back(std::move(*row));
    }
  }
  plan.cache_bytes = total;
  plan.cache_bytes_per_device = total_per_device;
  return layouts;
}

// Step 7 (easydel/caching/ragged_page/cache.py): eSurge's RaggedPagesCache replaces the TransformerCache: its kv_pages
// rows replace the cache rows.
Status LayRaggedCache(const ActivationRequest& request, const CacheGeometry& geometry, bool has_shapes,
                      Builder& builder) {
  ActivationPlan& plan = builder.plan;
  EP_ASSIGN_OR_RETURN(RaggedCacheReport ragged,
                      BuildRaggedCache(builder, request, geometry, KvDType(*request.config, request.dtype)));
  if (has_shapes) plan.tensors.push_back(ragged.pages);
  plan.cache_bytes = ragged.bytes;
  plan.cache_bytes_per_device = ragged.bytes_per_device;
  plan.ragged = std::move(ragged);
  return Status();
}

// Step 8: a decode step that constrains the cache to another layout than the one it is stored in makes
// XLA reshard the whole cache at every step.
void ReportCacheReshard(const ActivationRequest& request, const CacheLayouts& layouts, Builder& builder) {
  ActivationPlan& plan = builder.plan;
  plan.cache_reshard = !request.ragged && !SameLayout(layouts.stored, layouts.decode, plan.mesh);
  if (!plan.cache_reshard || !IsGenerationMode(request.attention.mode)) return;
  Finding finding;
  finding.code = FindingCode::kCacheReshard;
  finding.tensor = "kv_cache.key";
  finding.count = 1;
  finding.message = fmt::format(
      "kv_cache.key: the cache is stored as {} (prefill rules) but a decode step constrains it to {} (decode "
      "rules), so XLA reshards the whole cache at every step",
      layouts.stored.ToString(), layouts.decode.ToString());
  finding.notes.push_back(
      "the decode_* fields of partition_axis change the decode rules only; TransformerCache always stores with "
      "the train rules");
  builder.findings.Add(std::move(finding));
}

}  // namespace

StatusOr<ActivationPlan> BuildActivationPlan(const ActivationRequest& request) {
  EP_CHECK(
      request.table != nullptr && request.presets != nullptr && request.config != nullptr && request.dims != nullptr,
      "BuildActivationPlan inputs");
  ActivationPlan plan;
  plan.attention_options = request.attention;
  plan.mesh = request.mesh;
  Builder builder{plan, {}};
  const bool has_shapes = request.batch.has_value() && request.seq.has_value();
  plan.has_shapes = has_shapes;
  StepTokens tokens;
  tokens.batch = request.batch.value_or(0);
  tokens.seq = request.seq.value_or(0);
  tokens.query_length = request.attention.mode == RuntimeMode::kDecode ? 1 : tokens.seq;
  const CacheGeometry geometry = CacheGeometryOf(*request.dims);

  EP_RETURN_IF_ERROR(ResolveModeSpecs(request, tokens.query_length, plan));
  EP_RETURN_IF_ERROR(ReportKernel(request, geometry, tokens.query_length, plan));
  EP_RETURN_IF_ERROR(ResolveCacheSpecs(request, plan));
  EP_RETURN_IF_ERROR(PlanExperts(request, builder));
  CacheLayouts layouts{plan.cache_key, plan.cache_decode_key};
  if (has_shapes) {
    if (tokens.batch < 1 || tokens.seq < 1) return Status::BadInput({}, "--batch and --seq must be at least 1");
    EP_RETURN_IF_ERROR(LayStepTensors(request, geometry, tokens, builder));
    if (!request.ragged) {
      EP_ASSIGN_OR_RETURN(layouts,
                          LayTransformerCache(geometry, tokens, KvDType(*request.config, request.dtype), builder));
    }
  }
  if (request.ragged) EP_RETURN_IF_ERROR(LayRaggedCache(request, geometry, has_shapes, builder));
  ReportCacheReshard(request, layouts, builder);
  plan.findings = builder.Take();
  return plan;
}

}  // namespace easyplan::planner
