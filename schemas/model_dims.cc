#include "schemas/model_dims.h"

#include <algorithm>
#include <limits>

#include "core/checked_math.h"
#include "core/document.h"

namespace easyplan::schemas {
namespace {

// Typed lookups in one config object; a present, non-null value of the wrong type is an error that
// names its JSON pointer. `pointer` is the object's own pointer ("" or "/text_config").
class DimReader {
 public:
  // `geometry` holds the family's geometry values (ResolvedConfig::geometry of this object): they win
  // over the config's own keys of the same name.
  // `keys` says which keys each canonical dim is read from (schemas/dim_keys.h).
  DimReader(const Json& config, const Json* geometry, const DimKeys& keys, std::string pointer)
      : config_(config), geometry_(geometry), keys_(keys), pointer_(std::move(pointer)) {}

  std::string Pointer(const std::string& key) const { return pointer_ + "/" + PointerToken(key); }

  bool Has(const std::string& key) const { return FromGeometry(key) || config_.contains(key); }

  /// True when the family's geometry gives `key`.
  bool FromGeometry(const std::string& key) const { return geometry_ != nullptr && geometry_->contains(key); }

  // The value of `key`, or nullptr when it is absent or null.
  const Json* Find(const std::string& key) const {
    if (FromGeometry(key)) {
      const Json& value = (*geometry_)[key];
      return value.is_null() ? nullptr : &value;
    }
    auto it = config_.find(key);
    return it == config_.end() || it->is_null() ? nullptr : &*it;
  }

  Status WrongType(const std::string& pointer, const char* expected, const Json& found) const {
    return Status::BadInput({"", pointer}, std::string("expected ") + expected + ", found " + JsonForMessage(found) +
                                               " (" + JsonTypeName(found) + ")");
  }

  // ---- a canonical dim, read from its keys (schemas/dims.yaml or the family's `dims:`) ----

  // A kSize dim: the first of its keys that holds a positive integer, else 0 (every present one must be
  // an integer).
  StatusOr<int64_t> Size(Dim dim) const {
    int64_t found = 0;
    for (const std::string& key : keys_.Keys(dim)) {
      EP_ASSIGN_OR_RETURN(int64_t value, SizeAt(key));
      if (found == 0) found = value;
    }
    return found;
  }

  // A kInt dim: the first of its keys present, or nullopt.
  StatusOr<std::optional<int64_t>> Int(Dim dim) const {
    const std::string* key = FirstPresent(dim);
    if (key == nullptr) return std::optional<int64_t>();
    return IntAt(*key);
  }

  // A kNumber dim: the first of its keys present, else its default.
  StatusOr<double> Number(Dim dim) const {
    const std::string* key = FirstPresent(dim);
    if (key == nullptr) return keys_.Default(dim).get<double>();
    const Json& value = *Find(*key);
    if (!value.is_number()) return WrongType(Pointer(*key), "a number", value);
    return value.get<double>();
  }

  // A kBool dim: the first of its keys present, else its default.
  StatusOr<bool> Bool(Dim dim) const {
    const std::string* key = FirstPresent(dim);
    return key == nullptr ? keys_.Default(dim).get<bool>() : BoolAt(*key, false);
  }

  // A kString dim: the first of its keys present, else "".
  StatusOr<std::string> String(Dim dim) const {
    const std::string* key = FirstPresent(dim);
    return key == nullptr ? std::string() : StringAt(*key);
  }

  // A kStrings dim: the first of its keys present, else empty.
  StatusOr<std::vector<std::string>> Strings(Dim dim) const {
    const std::string* key = FirstPresent(dim);
    std::vector<std::string> strings;
    if (key == nullptr) return strings;
    const Json& value = *Find(*key);
    if (!value.is_array()) return WrongType(Pointer(*key), "a list of strings", value);
    for (size_t i = 0; i < value.size(); ++i) {
      const Json& item = value[i];
      if (!item.is_string()) return WrongType(Pointer(*key) + "/" + std::to_string(i), "a string", item);
      strings.push_back(item.get<std::string>());
    }
    return strings;
  }

  // A kInts dim: the first of its keys present, else empty.
  StatusOr<std::vector<int64_t>> Ints(Dim dim) const {
    const std::string* key = FirstPresent(dim);
    std::vector<int64_t> ints;
    if (key == nullptr) return ints;
    const Json& value = *Find(*key);
    if (!value.is_array()) return WrongType(Pointer(*key), "a list of integers", value);
    for (size_t i = 0; i < value.size(); ++i) {
      const Json& item = value[i];
      if (!item.is_number_integer()) return WrongType(Pointer(*key) + "/" + std::to_string(i), "an integer", item);
      ints.push_back(item.get<int64_t>());
    }
    return ints;
  }

  // A kPresent dim: whether the config (or the geometry) has any of its keys, even as null.
  bool Present(Dim dim) const {
    for (const std::string& key : keys_.Keys(dim)) {
      if (Has(key)) return true;
    }
    return false;
  }

  // The key `dim` is read from: the first present, else its first (for messages).
  const std::string& KeyOf(Dim dim) const {
    const std::string* key = FirstPresent(dim);
    return key != nullptr ? *key : keys_.Keys(dim).front();
  }

  // ---- a key the family's geometry names itself (gated_mlp, context:) ----

  // An integer key: its value, or nullopt when absent or null.
  StatusOr<std::optional<int64_t>> IntAt(const std::string& key) const {
    const Json* value = Find(key);
    if (value == nullptr) return std::optional<int64_t>();
    if (!value->is_number_integer()) return WrongType(Pointer(key), "an integer", *value);
    if (value->is_number_unsigned() &&
        value->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return WrongType(Pointer(key), "an integer that fits in 64 bits", *value);
    }
    return std::optional<int64_t>(value->get<int64_t>());
  }

  // A size: the integer when it is positive, else 0.
  StatusOr<int64_t> SizeAt(const std::string& key) const {
    EP_ASSIGN_OR_RETURN(std::optional<int64_t> value, IntAt(key));
    return value && *value > 0 ? *value : 0;
  }

  StatusOr<bool> BoolAt(const std::string& key, bool fallback) const {
    const Json* value = Find(key);
    if (value == nullptr) return fallback;
    if (!value->is_boolean()) return WrongType(Pointer(key), "true or false", *value);
    return value->get<bool>();
  }

  StatusOr<std::string> StringAt(const std::string& key) const {
    const Json* value = Find(key);
    if (value == nullptr) return std::string();
    if (!value->is_string()) return WrongType(Pointer(key), "a string", *value);
    return value->get<std::string>();
  }

  // A PartitionAxis field: a mesh axis name, a list of names, or null.
  StatusOr<std::vector<std::string>> AxisEntry(const char* field) const {
    std::vector<std::string> entry;
    const Json* partition_axis = Find("partition_axis");
    if (partition_axis == nullptr) return entry;
    if (!partition_axis->is_object()) return WrongType(Pointer("partition_axis"), "a mapping", *partition_axis);
    auto it = partition_axis->find(field);
    if (it == partition_axis->end() || it->is_null()) return entry;
    const std::string pointer = Pointer("partition_axis") + "/" + field;
    if (it->is_string()) {
      entry.push_back(it->get<std::string>());
      return entry;
    }
    if (!it->is_array()) return WrongType(pointer, "a mesh axis name or a list of names", *it);
    for (size_t i = 0; i < it->size(); ++i) {
      const Json& item = (*it)[i];
      if (!item.is_string()) return WrongType(pointer + "/" + std::to_string(i), "a mesh axis name", item);
      entry.push_back(item.get<std::string>());
    }
    return entry;
  }

 private:
  // The first of `dim`'s keys present and not null, or nullptr.
  const std::string* FirstPresent(Dim dim) const {
    for (const std::string& key : keys_.Keys(dim)) {
      if (Find(key) != nullptr) return &key;
    }
    return nullptr;
  }

  const Json& config_;
  const Json* geometry_;
  const DimKeys& keys_;
  std::string pointer_;
};

Status ReadTransformer(const DimReader& r, ModelDims& d) {
  EP_ASSIGN_OR_RETURN(d.hidden, r.Size(Dim::kHidden));
  EP_ASSIGN_OR_RETURN(d.layers, r.Size(Dim::kLayers));
  EP_ASSIGN_OR_RETURN(d.heads, r.Size(Dim::kHeads));
  EP_ASSIGN_OR_RETURN(d.kv_heads, r.Size(Dim::kKvHeads));
  if (d.kv_heads == 0) d.kv_heads = d.heads;
  EP_ASSIGN_OR_RETURN(d.head_dim, r.Size(Dim::kHeadDim));
  if (d.head_dim == 0 && d.hidden > 0 && d.heads > 0) d.head_dim = d.hidden / d.heads;
  EP_ASSIGN_OR_RETURN(d.intermediate, r.Size(Dim::kIntermediate));
  EP_ASSIGN_OR_RETURN(d.vocab, r.Size(Dim::kVocab));
  EP_ASSIGN_OR_RETURN(d.max_positions, r.Size(Dim::kMaxPositions));
  if (r.FromGeometry("context_key")) {
    EP_ASSIGN_OR_RETURN(d.context_key, r.StringAt("context_key"));
    EP_ASSIGN_OR_RETURN(d.context_limit, r.SizeAt(d.context_key));
    EP_ASSIGN_OR_RETURN(const std::string positions, r.StringAt("context_positions"));
    d.learned_positions = positions == "learned";
  }
  // Whether the MLP is gated is guessed from the keys the config has (schemas/dims.yaml, gated_mlp); a
  // family where the guess is wrong (GPT-NeoX has hidden_act and an fc / proj MLP) says so in its
  // geometry: `gated_mlp: false`.
  if (r.FromGeometry("gated_mlp")) {
    EP_ASSIGN_OR_RETURN(d.gated_mlp, r.BoolAt("gated_mlp", true));
  } else {
    d.gated_mlp = r.Present(Dim::kGatedMlp);
  }
  EP_ASSIGN_OR_RETURN(d.tied_embeddings, r.Bool(Dim::kTiedEmbeddings));
  EP_ASSIGN_OR_RETURN(d.norm_eps, r.Number(Dim::kNormEps));
  EP_ASSIGN_OR_RETURN(d.rope_theta, r.Number(Dim::kRopeTheta));
  EP_ASSIGN_OR_RETURN(d.torch_dtype, r.String(Dim::kTorchDtype));
  return Status();
}

Status ReadWindows(const DimReader& r, ModelDims& d) {
  EP_ASSIGN_OR_RETURN(d.sliding_window, r.Size(Dim::kSlidingWindow));
  EP_ASSIGN_OR_RETURN(d.use_sliding_window, r.Bool(Dim::kUseSlidingWindow));
  EP_ASSIGN_OR_RETURN(d.layer_types, r.Strings(Dim::kLayerTypes));
  EP_ASSIGN_OR_RETURN(d.attention_chunk_size, r.Size(Dim::kAttentionChunkSize));
  EP_ASSIGN_OR_RETURN(d.attention_sinks, r.Bool(Dim::kAttentionSinks));
  EP_ASSIGN_OR_RETURN(d.partial_rotary_factor, r.Number(Dim::kPartialRotaryFactor));
  EP_ASSIGN_OR_RETURN(d.use_qk_norm, r.Bool(Dim::kUseQkNorm));
  EP_ASSIGN_OR_RETURN(d.no_rope_layers, r.Ints(Dim::kNoRopeLayers));
  EP_ASSIGN_OR_RETURN(d.swiglu_limit, r.Number(Dim::kSwigluLimit));
  EP_ASSIGN_OR_RETURN(d.linear_key_heads, r.Size(Dim::kLinearKeyHeads));
  EP_ASSIGN_OR_RETURN(d.linear_value_heads, r.Size(Dim::kLinearValueHeads));
  EP_ASSIGN_OR_RETURN(d.linear_key_dim, r.Size(Dim::kLinearKeyDim));
  EP_ASSIGN_OR_RETURN(d.linear_value_dim, r.Size(Dim::kLinearValueDim));
  EP_ASSIGN_OR_RETURN(d.linear_conv_kernel, r.Size(Dim::kLinearConvKernel));
  return Status();
}

Status ReadExperts(const DimReader& r, ModelDims& d) {
  EP_ASSIGN_OR_RETURN(d.experts, r.Size(Dim::kExperts));
  EP_ASSIGN_OR_RETURN(d.top_k, r.Size(Dim::kTopK));
  EP_ASSIGN_OR_RETURN(d.moe_intermediate, r.Size(Dim::kMoeIntermediate));
  if (d.moe_intermediate == 0) d.moe_intermediate = d.intermediate;
  EP_ASSIGN_OR_RETURN(const int64_t shared_experts, r.Size(Dim::kSharedExperts));
  EP_ASSIGN_OR_RETURN(const int64_t shared_width, r.Size(Dim::kSharedIntermediate));
  if (shared_experts > 0) {
    std::optional<int64_t> width = CheckedMul(shared_experts, d.moe_intermediate);
    if (!width) {
      const std::string& key = r.KeyOf(Dim::kSharedExperts);
      return Status::BadInput({"", r.Pointer(key)}, "config: " + key + " x " + r.KeyOf(Dim::kMoeIntermediate) +
                                                        " overflows a 64-bit integer");
    }
    d.shared_intermediate = *width;
  } else {
    d.shared_intermediate = shared_width;
  }
  EP_ASSIGN_OR_RETURN(std::optional<int64_t> first_dense, r.Int(Dim::kFirstDenseLayers));
  d.first_dense_layers = first_dense.value_or(0);
  EP_ASSIGN_OR_RETURN(std::vector<std::string> mlp_layer_types, r.Strings(Dim::kMlpLayerTypes));
  if (d.experts > 0) {
    const bool typed = !mlp_layer_types.empty() && static_cast<int64_t>(mlp_layer_types.size()) == d.layers;
    d.moe_layer_mask.resize(static_cast<size_t>(std::max<int64_t>(d.layers, 0)));
    for (size_t i = 0; i < d.moe_layer_mask.size(); ++i) {
      d.moe_layer_mask[i] = typed ? mlp_layer_types[i] == "sparse" : static_cast<int64_t>(i) >= d.first_dense_layers;
    }
    d.moe_layers = std::count(d.moe_layer_mask.begin(), d.moe_layer_mask.end(), true);
  }
  EP_ASSIGN_OR_RETURN(d.norm_topk_prob, r.Bool(Dim::kNormTopkProb));
  EP_ASSIGN_OR_RETURN(d.n_group, r.Size(Dim::kNGroup));
  EP_ASSIGN_OR_RETURN(d.topk_group, r.Size(Dim::kTopkGroup));
  d.n_group = std::max<int64_t>(d.n_group, 1);
  d.topk_group = std::max<int64_t>(d.topk_group, 1);
  EP_ASSIGN_OR_RETURN(d.routed_scaling, r.Number(Dim::kRoutedScaling));
  EP_ASSIGN_OR_RETURN(d.router_jitter_noise, r.Number(Dim::kRouterJitterNoise));
  return Status();
}

Status ReadLatentAttention(const DimReader& r, ModelDims& d) {
  EP_ASSIGN_OR_RETURN(d.q_lora_rank, r.Size(Dim::kQLoraRank));
  EP_ASSIGN_OR_RETURN(d.kv_lora_rank, r.Size(Dim::kKvLoraRank));
  EP_ASSIGN_OR_RETURN(d.qk_nope_head_dim, r.Size(Dim::kQkNopeHeadDim));
  EP_ASSIGN_OR_RETURN(d.qk_rope_head_dim, r.Size(Dim::kQkRopeHeadDim));
  EP_ASSIGN_OR_RETURN(d.v_head_dim, r.Size(Dim::kVHeadDim));
  return Status();
}

Status ReadAxes(const DimReader& r, ModelDims& d) {
  EP_ASSIGN_OR_RETURN(d.axes.batch, r.AxisEntry("batch_axis"));
  EP_ASSIGN_OR_RETURN(d.axes.sequence, r.AxisEntry("sequence_axis"));
  EP_ASSIGN_OR_RETURN(d.axes.hidden_state, r.AxisEntry("hidden_state_axis"));
  EP_ASSIGN_OR_RETURN(d.axes.head, r.AxisEntry("head_axis"));
  // The five parallel axes by role, then the fold (each name placed once, as assign_axis skips a name
  // already placed).
  auto axis = [&r](const char* field, const char* fallback) -> StatusOr<std::vector<std::string>> {
    EP_ASSIGN_OR_RETURN(std::vector<std::string> entry, r.AxisEntry(field));
    if (entry.empty()) entry.push_back(fallback);
    return entry;
  };
  EP_ASSIGN_OR_RETURN(const std::vector<std::string> dp, axis("data_parallel_axis", "dp"));
  EP_ASSIGN_OR_RETURN(const std::vector<std::string> fsdp, axis("fully_sharded_data_parallel_axis", "fsdp"));
  EP_ASSIGN_OR_RETURN(const std::vector<std::string> ep, axis("expert_parallel_axis", "ep"));
  EP_ASSIGN_OR_RETURN(const std::vector<std::string> tp, axis("tensor_parallel_axis", "tp"));
  EP_ASSIGN_OR_RETURN(const std::vector<std::string> sp, axis("sequence_parallel_axis", "sp"));
  EP_ASSIGN_OR_RETURN(const bool fsdp_bound, r.BoolAt("fsdp_is_ep_bound", true));
  EP_ASSIGN_OR_RETURN(const bool sp_bound, r.BoolAt("sp_is_ep_bound", true));
  EP_ASSIGN_OR_RETURN(d.axes.expert_tensor_mode, r.BoolAt("use_expert_tensor_mode", false));
  std::vector<std::string> placed;
  auto place = [&placed](std::vector<std::string>& group, const std::vector<std::string>& names) {
    for (const std::string& name : names) {
      if (std::find(placed.begin(), placed.end(), name) != placed.end()) continue;
      placed.push_back(name);
      group.push_back(name);
    }
  };
  ActivationAxes& a = d.axes;
  place(a.expert_tensor, tp);
  std::vector<std::string> ep_fsdp, ep_own, ep_sp;
  place(ep_own, ep);
  place(a.expert_data, dp);
  place(fsdp_bound ? ep_fsdp : a.expert_data, fsdp);
  place(sp_bound ? ep_sp : a.expert_data, sp);
  for (auto* part : {&ep_fsdp, &ep_own, &ep_sp}) a.expert.insert(a.expert.end(), part->begin(), part->end());
  return Status();
}

}  // namespace

const Json& GeometryConfig(const Json& config) {
  if (config.contains("num_attention_heads") && !config["num_attention_heads"].is_null()) return config;
  auto text = config.find("text_config");
  if (text != config.end() && text->is_object() && text->contains("num_attention_heads")) return *text;
  return config;
}

StatusOr<ModelDims> ModelDimsOf(const Json& config, const Json& family_geometry, const DimKeysByObject& family_keys) {
  if (!config.is_object()) {
    return Status::BadInput({}, "config: expected a mapping, found " + std::string(JsonTypeName(config)));
  }
  const Json& geometry = GeometryConfig(config);
  ModelDims dims;
  dims.pointer = &geometry == &config ? "" : "/text_config";
  const Json* declared = nullptr;
  if (family_geometry.is_object()) {
    auto it = family_geometry.find(dims.pointer);
    if (it != family_geometry.end() && it->is_object()) declared = &*it;
  }
  const DimKeys* keys = nullptr;
  if (auto it = family_keys.find(dims.pointer); it != family_keys.end()) {
    keys = &it->second;
  } else {
    EP_ASSIGN_OR_RETURN(keys, BuiltinDimKeys());
  }
  const DimReader reader(geometry, declared, *keys, dims.pointer);
  EP_ASSIGN_OR_RETURN(dims.model_type, reader.String(Dim::kModelType));
  EP_RETURN_IF_ERROR(ReadTransformer(reader, dims));
  EP_RETURN_IF_ERROR(ReadWindows(reader, dims));
  EP_RETURN_IF_ERROR(ReadExperts(reader, dims));
  EP_RETURN_IF_ERROR(ReadLatentAttention(reader, dims));
  EP_RETURN_IF_ERROR(ReadAxes(reader, dims));
  return dims;
}

StatusOr<ModelDims> ModelDimsOf(const ResolvedConfig& resolved) {
  return ModelDimsOf(resolved.config, resolved.geometry, resolved.dim_keys);
}

}  // namespace easyplan::schemas
