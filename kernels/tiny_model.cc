#include "kernels/tiny_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <string_view>
#include <unordered_set>

#include "core/did_you_mean.h"

namespace easyplan::kernels {
namespace {

int64_t RoundUp(int64_t value, int64_t unit) { return (value + unit - 1) / unit * unit; }

// The named sizes of docs/CHECK.md (and this module's header) for one full model on one mesh.
std::map<std::string, int64_t> TinySizes(const schemas::ModelDims& full, const Mesh& mesh, planner::UnevenMode uneven,
                                         int64_t pipeline_chunks) {
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
      {"layers", std::max<int64_t>(2, pipeline_chunks)},
  };
}

}  // namespace

TinyModel FullSizeModel(const schemas::NumericCheckSpec& spec) {
  TinyModel model;
  model.structure = spec.structure;
  model.top_k_key = spec.top_k_key;
  return model;
}

StatusOr<TinyModel> DeriveTinyModel(const schemas::NumericCheckSpec& spec, const schemas::ModelDims& full,
                                    const Mesh& mesh, planner::UnevenMode uneven, int64_t pipeline_chunks) {
  TinyModel tiny = FullSizeModel(spec);
  const std::map<std::string, int64_t> sizes = TinySizes(full, mesh, uneven, pipeline_chunks);
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

namespace {

// "dir/" of a parameter name "dir/leaf" (the module it belongs to), "" for a bare leaf.
std::string Parent(const std::string& name) {
  const size_t slash = name.rfind('/');
  return slash == std::string::npos ? "" : name.substr(0, slash + 1);
}

// The first of a norm slot's candidates that layer 0 holds (its weight is `kernel` or `scale`), else "".
std::string ResolveNorm(const std::vector<std::string>& candidates, const std::string& layer,
                        const std::function<bool(const std::string&)>& has_tensor) {
  for (const std::string& name : candidates) {
    if (has_tensor(layer + name + "/kernel") || has_tensor(layer + name + "/scale")) return name;
  }
  return "";
}

}  // namespace

ModelDesc ModelDescOf(const TinyModel& tiny, const schemas::ModelDims& dims, const ParamTree& tree,
                      const planner::Plan& plan) {
  const schemas::ForwardStructure& f = tiny.structure;
  // A text tower inside a multimodal model (Llama 4, Mistral 3): its parameters under language_model/,
  // or (EasyDeL 090a03b2's gemma3 and mistral3) model/language_model/ in place of model/.
  std::unordered_set<std::string_view> names;
  for (const TensorEntry& t : tree.tensors) names.insert(t.name);
  ModelDesc m;
  static_cast<schemas::ModelDims&>(m) = dims;  // whole: ModelDesc is the dims plus what the tree says
  constexpr std::string_view kModel = "model/";
  if (names.contains("language_model/" + f.embedding)) {
    m.param_prefix = "language_model/";
  } else if (f.embedding.starts_with(kModel) &&
             names.contains("model/language_model/" + f.embedding.substr(kModel.size()))) {
    m.param_rename_from = kModel;
    m.param_rename_to = "model/language_model/";
  }
  const std::function<bool(const std::string&)> has_tensor = [&](const std::string& name) {
    return names.contains(m.Param(name));
  };
  const std::string layer0 = f.layers + "/0/";
  m.forward = f;
  // tied_by_tree: published checkpoints may store a head although tie_word_embeddings holds (Falcon).
  m.tied_embeddings = f.tied_by_tree ? !has_tensor(f.head) : dims.tied_embeddings;
  const std::string& qkv = f.attention.qkv.empty() ? f.attention.q : f.attention.qkv;
  m.attention_bias = !qkv.empty() && has_tensor(layer0 + qkv + "/bias");
  m.o_bias = has_tensor(layer0 + f.attention.o + "/bias");
  const std::string& mlp_in = f.mlp.gate_up.empty() ? (f.mlp.gate.empty() ? f.mlp.up : f.mlp.gate) : f.mlp.gate_up;
  m.mlp_bias = !mlp_in.empty() && has_tensor(layer0 + mlp_in + "/bias");
  m.qk_norm = !f.attention.q_norm.empty() && has_tensor(layer0 + f.attention.q_norm + "/kernel");
  // Every norm of a model has the final norm's weight leaf and bias.
  m.norm_weight = has_tensor(f.final_norm + "/scale") ? "scale" : "kernel";
  m.norm_bias = has_tensor(f.final_norm + "/bias");
  m.attention_norm = ResolveNorm(f.attention_norm, layer0, has_tensor);
  m.attention_output_norm = ResolveNorm(f.attention_output_norm, layer0, has_tensor);
  m.mlp_norm = ResolveNorm(f.mlp_norm, layer0, has_tensor);
  m.mlp_output_norm = ResolveNorm(f.mlp_output_norm, layer0, has_tensor);
  if (dims.partial_rotary_factor < 1.0 && dims.head_dim > 0) {
    m.rotary_dim = static_cast<int64_t>(static_cast<double>(dims.head_dim) * dims.partial_rotary_factor);
  }
  if (!dims.use_sliding_window) m.sliding_window = 0;
  if (!dims.no_rope_layers.empty()) {
    for (int64_t layer = 0; layer < dims.layers; ++layer) {
      const auto l = static_cast<size_t>(layer);
      m.nope_layers.push_back(l < dims.no_rope_layers.size() && dims.no_rope_layers[l] == 0);
    }
  }
  m.l2_qk_norm = f.attention.l2_qk_norm && dims.use_qk_norm;
  m.norm_topk_prob = f.moe.norm_topk_prob.value_or(dims.norm_topk_prob);
  if (!f.moe.block.empty()) {
    for (int64_t layer = 0; layer < dims.layers; ++layer) {
      bool sparse = true;
      if (f.moe.sparse_layers == schemas::SparseLayers::kAfterDense) sparse = layer >= dims.first_dense_layers;
      if (f.moe.sparse_layers == schemas::SparseLayers::kByTree) {
        sparse = has_tensor(fmt::format("{}/{}/{}/{}/kernel", f.layers, layer, f.moe.block, f.moe.router));
      }
      m.sparse_layers.push_back(sparse);
    }
  }
  // What the structure does not run stays at its zero: no shared experts, ungrouped routing, no MLA.
  if (f.moe.shared_kind == schemas::SharedExpertKind::kNone) m.shared_intermediate = 0;
  if (f.moe.router_kind != schemas::RouterKind::kSigmoidGroupLimited &&
      f.moe.router_kind != schemas::RouterKind::kSoftmaxGroupLimited) {
    m.n_group = 1;
    m.topk_group = 1;
  }
  m.score_bias = !f.moe.score_bias.empty() &&
                 has_tensor(fmt::format("{}/{}/{}/{}", f.layers, dims.layers - 1, f.moe.block, f.moe.score_bias));
  // The router's bias and the experts' weight leaf, read in the first sparse layer (the per-expert
  // layout's names in expert 0).
  const auto first_sparse = std::find(m.sparse_layers.begin(), m.sparse_layers.end(), true);
  if (first_sparse != m.sparse_layers.end()) {
    const std::string block = fmt::format("{}/{}/{}/", f.layers, first_sparse - m.sparse_layers.begin(), f.moe.block);
    m.router_bias = !f.moe.router.empty() && has_tensor(block + f.moe.router + "/bias");
    std::string expert = f.moe.gate_up.empty() ? f.moe.gate : f.moe.gate_up;
    if (const size_t at = expert.find("{e}"); at != std::string::npos) expert.replace(at, 3, "0");
    m.expert_kernel_leaf = has_tensor(block + expert) && !has_tensor(block + expert + "/kernel") ? "" : "kernel";
  }
  m.head_bias = !m.tied_embeddings && has_tensor(Parent(f.head) + "bias");
  if (f.attention.kind != schemas::AttentionKind::kLatent) {
    m.q_lora_rank = 0;
    m.kv_lora_rank = 0;
    m.qk_nope_head_dim = 0;
    m.qk_rope_head_dim = 0;
    m.v_head_dim = 0;
  }
  const int64_t batch_tiles = EntryTiles(plan.mesh, m.axes.batch);
  m.batch = batch_tiles > 1 ? batch_tiles : 2;
  m.seq = RoundUp(8, EntryTiles(plan.mesh, m.axes.sequence));
  m.bytes_per_element = plan.groups.empty() ? 2 : std::max(1, plan.groups[0].bits / 8);
  return m;
}

Json ReferenceTrainingOverrides(const ModelDesc& model, const std::string& top_k_key) {
  Json overrides = Json::object();
  overrides["gradient_checkpointing"] = "nothing_saveable";
  overrides["attn_mechanism"] = "vanilla";
  if (model.experts > 0 && model.forward.moe.execution != schemas::ExpertsExecution::kPerTokenGather) {
    overrides[top_k_key] = model.experts;
  }
  return overrides;
}

}  // namespace easyplan::kernels
