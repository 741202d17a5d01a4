#include "kernels/tiny_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "core/did_you_mean.h"

namespace easyplan::kernels {
namespace {

constexpr ModelFamily kFamilies[] = {ModelFamily::kLlama,  ModelFamily::kMoe,      ModelFamily::kDeepseek,
                                     ModelFamily::kGpt2,   ModelFamily::kFalcon,   ModelFamily::kGptOss,
                                     ModelFamily::kLlama4, ModelFamily::kQwen3Next};

int64_t RoundUp(int64_t value, int64_t unit) { return (value + unit - 1) / unit * unit; }

// The named sizes of docs/CHECK.md (and this module's header) for one full model on one mesh.
std::map<std::string, int64_t> TinySizes(const schemas::ModelDims& full, const Mesh& mesh, planner::UnevenMode uneven) {
  const int64_t devices = mesh.NumDevices();
  const int64_t head_dim = 8;
  const int64_t head_tiles = EntryTiles(mesh, full.axes.head);
  const int64_t unit = std::lcm(devices / std::gcd(devices, head_dim), head_tiles);
  const int64_t hidden = RoundUp(64, devices);
  const bool odd_vocab = uneven == planner::UnevenMode::kReplicate && full.vocab > 0 && full.vocab % devices != 0;
  const int64_t heads = full.heads > 0 ? full.heads : 1;
  const int64_t kv = full.kv_heads > 0 ? full.kv_heads : heads;
  const int64_t ratio = heads % kv == 0 ? heads / kv : 1;
  const int64_t gqa_kv_heads = kv < 2 ? unit : RoundUp(2, unit);
  const int64_t top_k = full.top_k > 0 ? full.top_k : 2;
  const int64_t groups = full.n_group;
  const int64_t mha_heads = RoundUp(4, unit);
  const int64_t linear_ratio = full.linear_key_heads > 0 && full.linear_value_heads % full.linear_key_heads == 0
                                   ? full.linear_value_heads / full.linear_key_heads
                                   : 1;
  return {
      {"hidden", hidden},
      {"intermediate", 2 * hidden},
      {"vocab", RoundUp(128, devices) + (odd_vocab ? 1 : 0)},
      {"head_dim", head_dim},
      {"mha_heads", mha_heads},
      {"mha_width", mha_heads * head_dim},
      {"gqa_kv_heads", gqa_kv_heads},
      {"gqa_heads", gqa_kv_heads * ratio},
      {"gqa_width", gqa_kv_heads * ratio * head_dim},
      {"linear_value_heads", gqa_kv_heads * linear_ratio},
      {"experts", RoundUp(std::max<int64_t>(2 * top_k, 4), devices)},
      {"grouped_experts", RoundUp(std::max({4 * top_k, 2 * groups, int64_t{4}}), std::lcm(devices, groups))},
      {"small_width", RoundUp(32, devices)},
      {"first_dense_layers", std::min<int64_t>(full.first_dense_layers, 1)},
  };
}

}  // namespace

std::string_view ModelFamilyName(ModelFamily family) {
  switch (family) {
    case ModelFamily::kLlama:
      return "llama";
    case ModelFamily::kMoe:
      return "moe";
    case ModelFamily::kDeepseek:
      return "deepseek";
    case ModelFamily::kGpt2:
      return "gpt2";
    case ModelFamily::kFalcon:
      return "falcon";
    case ModelFamily::kGptOss:
      return "gpt_oss";
    case ModelFamily::kLlama4:
      return "llama4";
    case ModelFamily::kQwen3Next:
      return "qwen3_next";
  }
  return "llama";
}

StatusOr<TinyModel> FullSizeModel(const schemas::NumericCheckSpec& spec) {
  TinyModel model;
  std::vector<std::string> forwards;
  bool known = false;
  for (ModelFamily family : kFamilies) {
    forwards.emplace_back(ModelFamilyName(family));
    if (ModelFamilyName(family) == spec.forward) {
      model.family = family;
      known = true;
    }
  }
  if (!known) {
    std::string message = "numeric_check: forward '" + spec.forward + "' is not a reference forward pass";
    if (auto suggestion = SuggestClosest(spec.forward, forwards)) message += " (did you mean '" + *suggestion + "'?)";
    return Status::BadInput(spec.forward_loc, message, {"expected one of " + JoinQuoted(forwards)});
  }
  model.mixtral_names = spec.mixtral_names;
  model.norm_topk_prob = spec.norm_topk_prob;
  return model;
}

StatusOr<TinyModel> DeriveTinyModel(const schemas::NumericCheckSpec& spec, const schemas::ModelDims& full,
                                    const Mesh& mesh, planner::UnevenMode uneven) {
  EP_ASSIGN_OR_RETURN(TinyModel tiny, FullSizeModel(spec));
  const std::map<std::string, int64_t> sizes = TinySizes(full, mesh, uneven);
  for (const schemas::TinySetting& setting : spec.tiny) {
    Json value;
    if (setting.value) {
      value = *setting.value;
    } else if (auto it = sizes.find(setting.size); it != sizes.end()) {
      value = it->second;
    } else {
      std::vector<std::string> names;
      for (const auto& [name, size] : sizes) names.push_back(name);
      std::string message = "numeric_check: '" + setting.key + "' names the tiny size '" + setting.size +
                            "', which is not one of kernels/tiny_model.h";
      if (auto suggestion = SuggestClosest(setting.size, names)) message += " (did you mean '" + *suggestion + "'?)";
      return Status::BadInput(setting.loc, message, {"expected one of " + JoinQuoted(names)});
    }
    tiny.sets.push_back(setting.key + "=" + JsonForMessage(value, std::string::npos));
    // A key set twice keeps its last value in place, as repeated --set flags would.
    tiny.overrides[setting.key] = std::move(value);
  }
  return tiny;
}

std::vector<std::string> SetStrings(const Json& overrides) {
  std::vector<std::string> sets;
  for (const auto& [key, value] : overrides.items())
    sets.push_back(key + "=" + JsonForMessage(value, std::string::npos));
  return sets;
}

ModelDesc ModelDescOf(const TinyModel& tiny, const schemas::ModelDims& dims, const ParamTree& tree,
                      const planner::Plan& plan) {
  // A text tower inside a multimodal model (Llama 4): its parameters under language_model/.
  const std::string prefix =
      std::any_of(tree.tensors.begin(), tree.tensors.end(),
                  [](const TensorEntry& t) { return t.name == "language_model/model/embed_tokens/embedding"; })
          ? "language_model/"
          : "";
  auto has_tensor = [&](const std::string& name) {
    return std::any_of(tree.tensors.begin(), tree.tensors.end(),
                       [&](const TensorEntry& t) { return t.name == prefix + name; });
  };
  ModelDesc m;
  m.param_prefix = prefix;
  m.family = tiny.family;
  m.model_type = dims.model_type;
  m.mixtral_names = tiny.mixtral_names;
  m.vocab = dims.vocab;
  m.hidden = dims.hidden;
  m.layers = dims.layers;
  m.heads = dims.heads;
  m.kv_heads = dims.kv_heads;
  m.head_dim = dims.head_dim;
  m.intermediate = dims.intermediate;
  m.norm_eps = dims.norm_eps;
  m.rope_theta = dims.rope_theta;
  m.tied_embeddings = dims.tied_embeddings;
  m.attention_bias = has_tensor("model/layers/0/self_attn/q_proj/bias");
  m.o_bias = has_tensor("model/layers/0/self_attn/o_proj/bias");
  m.mlp_bias = has_tensor("model/layers/0/mlp/gate_proj/bias");
  m.qk_norm = has_tensor("model/layers/0/self_attn/q_norm/kernel");
  if (dims.partial_rotary_factor < 1.0 && dims.head_dim > 0) {
    m.rotary_dim = static_cast<int64_t>(static_cast<double>(dims.head_dim) * dims.partial_rotary_factor);
  }
  m.layer_types = dims.layer_types;
  if (dims.use_sliding_window) m.sliding_window = dims.sliding_window;
  m.attention_chunk = dims.attention_chunk_size;
  m.experts = dims.experts;
  m.top_k = dims.top_k;
  m.moe_intermediate = dims.moe_intermediate;
  m.norm_topk_prob = tiny.norm_topk_prob.value_or(dims.norm_topk_prob);
  m.first_dense_layers = dims.first_dense_layers;
  if (tiny.family == ModelFamily::kFalcon) {
    m.attention_bias = m.o_bias = m.mlp_bias = has_tensor("transformer/h/0/self_attention/query_key_value/bias");
    m.falcon_two_norms = has_tensor("transformer/h/0/ln_attn/scale");
    m.falcon_sequential = has_tensor("transformer/h/0/post_attention_layernorm/scale");
    // The published checkpoints store lm_head although tie_word_embeddings holds; the tree says which.
    m.tied_embeddings = !has_tensor("lm_head/kernel");
  }
  if (tiny.family == ModelFamily::kGptOss) {
    m.attention_sinks = true;
    m.swiglu_limit = dims.swiglu_limit;
  }
  if (tiny.family == ModelFamily::kLlama4) {
    m.rope_interleaved = true;
    for (int64_t layer = 0; layer < dims.layers; ++layer) {
      const auto l = static_cast<size_t>(layer);
      m.nope_layers.push_back(l < dims.no_rope_layers.size() && dims.no_rope_layers[l] == 0);
      m.sparse_layers.push_back(has_tensor(fmt::format("model/layers/{}/feed_forward/router/kernel", layer)));
    }
    m.l2_qk_norm = dims.use_qk_norm;
  }
  if (tiny.family == ModelFamily::kQwen3Next) {
    m.zero_centered_norms = true;
    m.attention_output_gate = true;
    m.linear_key_heads = dims.linear_key_heads;
    m.linear_value_heads = dims.linear_value_heads;
    m.linear_key_dim = dims.linear_key_dim;
    m.linear_value_dim = dims.linear_value_dim;
    for (int64_t layer = 0; layer < dims.layers; ++layer)
      m.sparse_layers.push_back(has_tensor(fmt::format("model/layers/{}/mlp/gate/kernel", layer)));
  }
  // Shared experts, group-limited routing and MLA are DeepSeek's forward pass's alone (GLM-4.5 runs it
  // with GQA attention: no MLA ranks).
  if (tiny.family == ModelFamily::kDeepseek) {
    m.shared_intermediate = dims.shared_intermediate;
    m.n_group = dims.n_group;
    m.topk_group = dims.topk_group;
    m.routed_scaling = dims.routed_scaling;
    m.correction_bias = has_tensor(fmt::format("model/layers/{}/mlp/gate/e_score_correction_bias", dims.layers - 1));
    m.q_lora_rank = dims.q_lora_rank;
    m.kv_lora_rank = dims.kv_lora_rank;
    m.qk_nope = dims.qk_nope_head_dim;
    m.qk_rope = dims.qk_rope_head_dim;
    m.v_head = dims.v_head_dim;
  }
  m.batch_axes = dims.axes.batch;
  m.sequence_axes = dims.axes.sequence;
  m.hidden_axes = dims.axes.hidden_state;
  m.head_axes = dims.axes.head;
  m.expert_data_axes = dims.axes.expert_data;
  m.expert_axes = dims.axes.expert;
  m.expert_tensor_axes = dims.axes.expert_tensor;
  m.expert_tensor_mode = dims.axes.expert_tensor_mode;
  const int64_t batch_tiles = EntryTiles(plan.mesh, m.batch_axes);
  m.batch = batch_tiles > 1 ? batch_tiles : 2;
  m.seq = RoundUp(8, EntryTiles(plan.mesh, m.sequence_axes));
  m.bytes_per_element = plan.groups.empty() ? 2 : std::max(1, plan.groups[0].bits / 8);
  return m;
}

Json ReferenceTrainingOverrides(const ModelDesc& model) {
  Json overrides = Json::object();
  overrides["gradient_checkpointing"] = "nothing_saveable";
  overrides["attn_mechanism"] = "vanilla";
  if (model.experts > 0) overrides["num_experts_per_tok"] = model.experts;
  return overrides;
}

std::vector<std::string> CoveredModelTypes(const std::vector<std::pair<std::string, std::string>>& declared) {
  std::vector<std::pair<size_t, std::string>> ranked;
  for (const auto& [model_type, forward] : declared) {
    size_t rank = std::size(kFamilies);
    for (size_t i = 0; i < std::size(kFamilies); ++i) {
      if (ModelFamilyName(kFamilies[i]) == forward) rank = i;
    }
    ranked.emplace_back(rank, model_type);
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> names;
  for (auto& [rank, name] : ranked) names.push_back(std::move(name));
  return names;
}

}  // namespace easyplan::kernels
