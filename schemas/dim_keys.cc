#include "schemas/dim_keys.h"

#include <set>

#include "core/did_you_mean.h"
#include "core/json_pointer.h"
#include "schemas/data_source.h"
#include "schemas/schema_reader.h"

namespace easyplan::schemas {
namespace {

struct DimInfo {
  Dim dim;
  std::string_view name;
  DimKind kind;
};

// In Dim order (checked below), named after the ModelDims member each fills.
constexpr std::array<DimInfo, kDimCount> kDims = {{
    {Dim::kModelType, "model_type", DimKind::kString},
    {Dim::kHidden, "hidden", DimKind::kSize},
    {Dim::kLayers, "layers", DimKind::kSize},
    {Dim::kHeads, "heads", DimKind::kSize},
    {Dim::kKvHeads, "kv_heads", DimKind::kSize},
    {Dim::kHeadDim, "head_dim", DimKind::kSize},
    {Dim::kIntermediate, "intermediate", DimKind::kSize},
    {Dim::kVocab, "vocab", DimKind::kSize},
    {Dim::kMaxPositions, "max_positions", DimKind::kSize},
    {Dim::kGatedMlp, "gated_mlp", DimKind::kPresent},
    {Dim::kTiedEmbeddings, "tied_embeddings", DimKind::kBool},
    {Dim::kNormEps, "norm_eps", DimKind::kNumber},
    {Dim::kRopeTheta, "rope_theta", DimKind::kNumber},
    {Dim::kTorchDtype, "torch_dtype", DimKind::kString},
    {Dim::kSlidingWindow, "sliding_window", DimKind::kSize},
    {Dim::kUseSlidingWindow, "use_sliding_window", DimKind::kBool},
    {Dim::kLayerTypes, "layer_types", DimKind::kStrings},
    {Dim::kAttentionChunkSize, "attention_chunk_size", DimKind::kSize},
    {Dim::kAttentionSinks, "attention_sinks", DimKind::kBool},
    {Dim::kPartialRotaryFactor, "partial_rotary_factor", DimKind::kNumber},
    {Dim::kUseQkNorm, "use_qk_norm", DimKind::kBool},
    {Dim::kNoRopeLayers, "no_rope_layers", DimKind::kInts},
    {Dim::kSwigluLimit, "swiglu_limit", DimKind::kNumber},
    {Dim::kLinearKeyHeads, "linear_key_heads", DimKind::kSize},
    {Dim::kLinearValueHeads, "linear_value_heads", DimKind::kSize},
    {Dim::kLinearKeyDim, "linear_key_dim", DimKind::kSize},
    {Dim::kLinearValueDim, "linear_value_dim", DimKind::kSize},
    {Dim::kLinearConvKernel, "linear_conv_kernel", DimKind::kSize},
    {Dim::kExperts, "experts", DimKind::kSize},
    {Dim::kTopK, "top_k", DimKind::kSize},
    {Dim::kMoeIntermediate, "moe_intermediate", DimKind::kSize},
    {Dim::kSharedExperts, "shared_experts", DimKind::kSize},
    {Dim::kSharedIntermediate, "shared_intermediate", DimKind::kSize},
    {Dim::kFirstDenseLayers, "first_dense_layers", DimKind::kInt},
    {Dim::kMlpLayerTypes, "mlp_layer_types", DimKind::kStrings},
    {Dim::kNormTopkProb, "norm_topk_prob", DimKind::kBool},
    {Dim::kNGroup, "n_group", DimKind::kSize},
    {Dim::kTopkGroup, "topk_group", DimKind::kSize},
    {Dim::kRoutedScaling, "routed_scaling", DimKind::kNumber},
    {Dim::kRouterJitterNoise, "router_jitter_noise", DimKind::kNumber},
    {Dim::kQLoraRank, "q_lora_rank", DimKind::kSize},
    {Dim::kKvLoraRank, "kv_lora_rank", DimKind::kSize},
    {Dim::kQkNopeHeadDim, "qk_nope_head_dim", DimKind::kSize},
    {Dim::kQkRopeHeadDim, "qk_rope_head_dim", DimKind::kSize},
    {Dim::kVHeadDim, "v_head_dim", DimKind::kSize},
}};

constexpr bool InDimOrder() {
  for (size_t i = 0; i < kDims.size(); ++i) {
    if (static_cast<size_t>(kDims[i].dim) != i) return false;
  }
  return true;
}
static_assert(InDimOrder(), "kDims lists every Dim once, in enum order");

bool HasDefault(DimKind kind) { return kind == DimKind::kNumber || kind == DimKind::kBool; }

// The dim named by the key at `pointer`, or an error naming the file, line and key with a did-you-mean.
StatusOr<Dim> DimAt(const SchemaReader& reader, const std::string& pointer, const std::string& name) {
  if (std::optional<Dim> dim = DimNamed(name)) return *dim;
  const std::vector<std::string> names = DimNames();
  std::string message = "unknown dim '" + name + "'";
  if (auto suggestion = SuggestClosest(name, names)) {
    message += " (did you mean '" + *suggestion + "'?)";
  } else {
    message += "; expected one of the dims of schemas/dims.yaml (" + JoinQuoted(names) + ")";
  }
  return reader.Error(pointer, message);
}

// A non-empty list of config keys.
StatusOr<std::vector<std::string>> KeyList(const SchemaReader& reader, const std::string& pointer, const Json& list) {
  if (!list.is_array() || list.empty()) {
    return reader.Error(pointer, "expected a non-empty list of config keys, found " + JsonForMessage(list));
  }
  std::vector<std::string> keys;
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& key = list[i];
    if (!key.is_string() || key.get<std::string>().empty()) {
      return reader.Error(PointerToElement(pointer, i), "expected a config key, found " + JsonForMessage(key));
    }
    keys.push_back(key.get<std::string>());
  }
  return keys;
}

}  // namespace

std::string_view DimName(Dim dim) { return kDims[static_cast<size_t>(dim)].name; }

DimKind DimKindOf(Dim dim) { return kDims[static_cast<size_t>(dim)].kind; }

std::optional<Dim> DimNamed(std::string_view name) {
  for (const DimInfo& info : kDims) {
    if (info.name == name) return info.dim;
  }
  return std::nullopt;
}

std::vector<std::string> DimNames() {
  std::vector<std::string> names;
  for (const DimInfo& info : kDims) names.emplace_back(info.name);
  return names;
}

StatusOr<DimKeys> ParseDimKeys(const Document& doc) {
  SchemaReader reader(doc);
  EP_RETURN_IF_ERROR(reader.CheckKeys(doc.root(), "", {"dims"}));
  auto block = doc.root().find("dims");
  if (block == doc.root().end() || !block->is_object()) {
    return reader.Error("", "expected `dims:`, a mapping of every canonical dim to {keys, default}");
  }
  DimKeys keys;
  std::set<Dim> seen;
  for (const auto& [name, entry] : block->items()) {
    const std::string pointer = PointerToMember("/dims", name);
    EP_ASSIGN_OR_RETURN(Dim dim, DimAt(reader, pointer, name));
    seen.insert(dim);
    EP_RETURN_IF_ERROR(reader.CheckKeys(entry, pointer, {"keys", "default", "doc"}));
    auto list = entry.find("keys");
    if (list == entry.end()) return reader.Error(pointer, "missing required key 'keys'");
    EP_ASSIGN_OR_RETURN(std::vector<std::string> spellings, KeyList(reader, PointerToMember(pointer, "keys"), *list));
    keys.SetKeys(dim, std::move(spellings));
    const DimKind kind = DimKindOf(dim);
    auto given = entry.find("default");
    if (!HasDefault(kind)) {
      if (given != entry.end()) {
        return reader.Error(PointerToMember(pointer, "default"),
                            "dim '" + name + "' has no default (a size is 0 when absent, a string or list empty)");
      }
      continue;
    }
    if (given == entry.end()) return reader.Error(pointer, "missing required key 'default'");
    const bool number = kind == DimKind::kNumber;
    if (number ? !given->is_number() : !given->is_boolean()) {
      return reader.Error(
          PointerToMember(pointer, "default"),
          std::string("expected ") + (number ? "a number" : "true or false") + ", found " + JsonForMessage(*given));
    }
    keys.SetDefault(dim, *given);
  }
  for (const DimInfo& info : kDims) {
    if (!seen.count(info.dim)) {
      return reader.Error("/dims", "missing dim '" + std::string(info.name) + "': every canonical dim names its keys");
    }
  }
  return keys;
}

StatusOr<DimKeyOverrides> ParseDimKeyOverrides(const Document& doc, const Json& block, const std::string& pointer) {
  SchemaReader reader(doc);
  DimKeyOverrides overrides;
  if (block.is_null()) return overrides;
  if (!block.is_object()) {
    return reader.Error(
        pointer, "expected a mapping of dim name to a list of config keys, found " + std::string(JsonTypeName(block)));
  }
  for (const auto& [name, list] : block.items()) {
    const std::string here = PointerToMember(pointer, name);
    EP_ASSIGN_OR_RETURN(Dim dim, DimAt(reader, here, name));
    EP_ASSIGN_OR_RETURN(std::vector<std::string> spellings, KeyList(reader, here, list));
    overrides.emplace_back(dim, std::move(spellings));
  }
  return overrides;
}

DimKeys WithOverrides(const DimKeys& shared, const std::vector<const DimKeyOverrides*>& overrides) {
  DimKeys keys = shared;
  std::set<Dim> named;
  for (const DimKeyOverrides* family : overrides) {
    for (const auto& [dim, spellings] : *family) {
      if (named.insert(dim).second) keys.SetKeys(dim, spellings);
    }
  }
  return keys;
}

StatusOr<const DimKeys*> BuiltinDimKeys() {
  static const StatusOr<DimKeys> parsed = []() -> StatusOr<DimKeys> {
    EP_ASSIGN_OR_RETURN(Document doc, DataSource::Embedded().ReadDocument("schemas/dims.yaml"));
    return ParseDimKeys(doc);
  }();
  if (!parsed.ok()) return parsed.status();
  return &*parsed;
}

}  // namespace easyplan::schemas
