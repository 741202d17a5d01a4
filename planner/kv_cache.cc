#include "planner/kv_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "core/checked_math.h"
#include "planner/layout.h"
#include "planner/runtime_modes.h"

namespace easyplan::planner {
namespace {

constexpr char kSanitiser[] = "the cache sanitiser";

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

// Findings for the entries of `spec` that the sanitiser drops for `key_shape` (`stored`: once per dim,
// counted over the layers), and for an axis the mesh lacks.
void ReportCacheSanitiser(const PartitionSpec& spec, const PartitionSpec& stored, const std::string& unknown,
                          const Shape& key_shape, const Shape& value_shape, int64_t layers,
                          ActivationBuilder& builder) {
  const Mesh& mesh = builder.mesh();
  if (!unknown.empty()) {
    Finding finding;
    finding.code = FindingCode::kUnknownAxis;
    finding.tensor = "kv_cache.key";
    finding.count = 1;
    finding.message = fmt::format(
        "kv_cache.key {}: {} names mesh axis '{}', which the mesh ({}) does not have; "
        "EasyDeL's cache sanitiser raises KeyError",
        key_shape.ToString(), spec.ToString(), unknown, mesh.ToString());
    builder.Add(std::move(finding), -1, unknown);
  }
  for (int dim = 0; dim < spec.size() && dim < 4; ++dim) {
    const PartitionSpec::Entry& entry = spec[dim];
    if (entry.empty() || !stored[dim].empty()) continue;
    const int64_t product = AxisProduct(entry, mesh, nullptr);
    const int64_t size = key_shape[dim] % product != 0 ? key_shape[dim] : value_shape[dim];
    Finding finding;
    finding.code = FindingCode::kUnevenReplaced;
    finding.tensor = "kv_cache.key";
    finding.count = std::max<int64_t>(layers, 1);
    finding.message = fmt::format("kv_cache.key {}: dim {} ({}) is not divisible by {}, so {} leaves it unsharded",
                                  key_shape.ToString(), dim, size, EntryAxesText(entry, mesh), kSanitiser);
    finding.notes.push_back(
        fmt::format("dim {} shards over {} when it is a multiple of {}", dim, fmt::join(entry, " x "), product));
    builder.AddUneven(std::move(finding), fmt::format("cache|{}|{}|{}", dim, fmt::join(entry, ","), size));
  }
}

}  // namespace

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

DType KvDType(const Json& config, DType activation) {
  auto name = config.find("kvdtype");
  if (name != config.end() && name->is_string()) {
    if (std::optional<DType> parsed = ParseDType(name->get<std::string>())) return *parsed;
  }
  return activation;
}

StatusOr<CacheSpecs> ResolveCacheSpecs(const ActivationTable& table, const rules::Presets& presets,
                                       const Json& config) {
  CacheSpecs specs;
  EP_ASSIGN_OR_RETURN(specs.key, ResolveAxes(*table.FindCache("key"), presets, config, Mode::kTrain));
  EP_ASSIGN_OR_RETURN(specs.value, ResolveAxes(*table.FindCache("value"), presets, config, Mode::kTrain));
  EP_ASSIGN_OR_RETURN(specs.index, ResolveAxes(*table.FindCache("indexs"), presets, config, Mode::kTrain));
  AttnOptions decode_options;
  decode_options.mode = Mode::kDecode;
  EP_ASSIGN_OR_RETURN(AttnShardingRules decode_rules, GetShardings(table, presets, config, decode_options));
  specs.decode_key = decode_rules.key;
  return specs;
}

StatusOr<LaidCache> LayTransformerCache(const CacheSpecs& specs, const CacheGeometry& geometry, int64_t batch,
                                        int64_t seq, DType kvdtype, ActivationBuilder& builder) {
  const Mesh& mesh = builder.mesh();
  LaidCache laid;
  // The specs each group starts from: the raw ones, then what the first group stores.
  CacheSpecs& current = laid.specs;
  current = specs;
  laid.stored = specs.key;
  laid.decode = specs.decode_key;
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
    const PartitionSpec stored = SanitizeCacheSpec(current.key, {key_shape, value_shape}, mesh, &unknown);
    ReportCacheSanitiser(current.key, stored, unknown, key_shape, value_shape, layers, builder);
    const PartitionSpec index_spec =
        SanitizeCacheSpec(current.index, {Shape{batch}}, mesh, nullptr).entries().front().empty()
            ? PartitionSpec(std::vector<PartitionSpec::Entry>(1))
            : current.index;
    const PartitionSpec stored_value = stored;  // the same sanitised axes for K and V
    const int64_t window = length == seq && first_group ? 0 : length;
    const std::string suffix = window > 0 ? fmt::format("[{} {}]", chunked ? "chunked" : "sliding", window) : "";
    ActivationTensor key_row{"kv_cache.key" + suffix, key_shape, kvdtype, current.key, stored};
    ActivationTensor value_row{"kv_cache.value" + suffix, value_shape, kvdtype, current.value, stored_value};
    ActivationTensor indexs_row{"kv_cache.indexs" + suffix, Shape{batch}, DType::kInt32, current.index, index_spec};
    ActivationTensor starts_row{"kv_cache.starts" + suffix, Shape{batch}, DType::kInt32, current.index, index_spec};
    for (ActivationTensor* row : {&key_row, &value_row, &indexs_row, &starts_row}) {
      row->layers = layers;
      row->window = window;
      EP_RETURN_IF_ERROR(add_rows(*row, layers));
      laid.rows.push_back(std::move(*row));
    }
    if (first_group) {
      laid.stored = stored;
      laid.decode = CorrectSpec(key_shape, current.decode_key, mesh, UnevenMode::kReplicate).spec;
      current.decode_key = laid.decode;
      current.key = stored;
      current.value = stored;
      current.index = index_spec;
    }
    first_group = false;
  }
  // Linear-attention layers (Qwen3-Next) keep a state of fixed size whatever the sequence length. Its
  // batch dim follows the cache's indexs (the batch axes when they divide the batch); easyplan knows no
  // EasyDeL spec for the rest, so the state is counted whole on every device of a batch shard.
  if (const LinearStateGeometry& state = geometry.linear_state; state.layers > 0) {
    PartitionSpec::Entry batch_entry =
        current.index.entries().empty() ? PartitionSpec::Entry() : current.index.entries().front();
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
      laid.rows.push_back(std::move(*row));
    }
  }
  laid.bytes = total;
  laid.bytes_per_device = total_per_device;
  return laid;
}

Finding CacheReshardFinding(const PartitionSpec& stored, const PartitionSpec& decode) {
  Finding finding;
  finding.code = FindingCode::kCacheReshard;
  finding.tensor = "kv_cache.key";
  finding.count = 1;
  finding.message = fmt::format(
      "kv_cache.key: the cache is stored as {} (prefill rules) but a decode step constrains it to {} (decode "
      "rules), so XLA reshards the whole cache at every step",
      stored.ToString(), decode.ToString());
  finding.notes.push_back(
      "the decode_* fields of partition_axis change the decode rules only; TransformerCache always stores with "
      "the train rules");
  return finding;
}

}  // namespace easyplan::planner
