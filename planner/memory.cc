#include "planner/memory.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "core/byte_size.h"
#include "core/checked_math.h"
#include "core/document.h"
#include "core/enum_table.h"
#include "core/json_pointer.h"
#include "core/shape.h"
#include "core/yaml_parse.h"
#include "schemas/schema_reader.h"

namespace easyplan::planner {
namespace {

/// An int64 that remembers overflow: every byte count of the model goes through it.
struct Checked {
  std::optional<int64_t> v = 0;
  Checked() = default;
  Checked(int64_t x) : v(x) {}                 // NOLINT(google-explicit-constructor)
  Checked(std::optional<int64_t> x) : v(x) {}  // NOLINT(google-explicit-constructor)
};
Checked operator+(Checked a, Checked b) {
  if (!a.v || !b.v) return Checked(std::nullopt);
  return CheckedAdd(*a.v, *b.v);
}
Checked operator*(Checked a, Checked b) {
  if (!a.v || !b.v) return Checked(std::nullopt);
  return CheckedMul(*a.v, *b.v);
}
/// ceil(a / b). REQUIRES: b > 0, a >= 0.
Checked CeilDiv(Checked a, int64_t b) {
  if (!a.v) return a;
  return *a.v / b + (*a.v % b != 0);
}
StatusOr<int64_t> Value(Checked c, std::string_view what) {
  if (!c.v) return Status::BadInput({}, "memory: the " + std::string(what) + " bytes overflow a 64-bit integer");
  return *c.v;
}

/// Bytes of `elements` elements of `bits` bits (rounded up to whole bytes).
Checked ElementBytes(Checked elements, int bits) {
  if (!elements.v) return elements;
  return ByteSize(*elements.v, bits);
}

// Size of a tensor of the step's activation plan on one device, 0 when absent.
int64_t StepBytes(const ActivationPlan& plan, std::string_view name) {
  for (const ActivationTensor& t : plan.tensors) {
    if (t.name == name) return t.bytes_per_device;
  }
  return 0;
}

// The optimizers `--optimizer` takes.
constexpr EnumName<Optimizer> kOptimizerNames[] = {
    {Optimizer::kAdamW, "adamw"},
    {Optimizer::kAdafactor, "adafactor"},
    {Optimizer::kLion, "lion"},
    {Optimizer::kSgd, "sgd"},
};

// EasyDeL's gradient_checkpointing names, then the aliases it also accepts for them (the names of
// jax.checkpoint_policies), and "" for none.
constexpr EnumName<CheckpointPolicy> kCheckpointPolicyNames[] = {
    {CheckpointPolicy::kNone, "none"},
    {CheckpointPolicy::kEverythingSaveable, "everything_saveable"},
    {CheckpointPolicy::kNothingSaveable, "nothing_saveable"},
    {CheckpointPolicy::kCheckpointDots, "checkpoint_dots"},
    {CheckpointPolicy::kDotsNoBatchDims, "checkpoint_dots_with_no_batch_dims"},
    {CheckpointPolicy::kCheckpointDots, "dots_saveable"},
    {CheckpointPolicy::kDotsNoBatchDims, "dots_with_no_batch_dims_saveable"},
    {CheckpointPolicy::kNone, ""},
};

}  // namespace

std::string_view OptimizerName(Optimizer optimizer) { return NameOf(kOptimizerNames, optimizer); }

std::optional<Optimizer> ParseOptimizer(std::string_view text) { return ParseEnum(kOptimizerNames, text); }

std::string_view CheckpointPolicyName(CheckpointPolicy policy) { return NameOf(kCheckpointPolicyNames, policy); }

std::optional<CheckpointPolicy> ParseCheckpointPolicy(std::string_view text) {
  return ParseEnum(kCheckpointPolicyNames, text);
}

StatusOr<MemoryModel> MemoryModelOf(const schemas::ModelDims& dims, const Json& config) {
  for (const auto& [key, value] : {std::pair{"hidden_size", dims.hidden}, std::pair{"num_hidden_layers", dims.layers},
                                   std::pair{"vocab_size", dims.vocab}, std::pair{"num_attention_heads", dims.heads}}) {
    if (value <= 0) return Status::BadInput({}, std::string("config: memory needs a positive integer '") + key + "'");
  }
  MemoryModel model;
  model.dims = dims;
  if (model.dims.head_dim <= 0) model.dims.head_dim = std::max<int64_t>(1, dims.hidden / dims.heads);
  if (model.dims.experts > 0) model.dims.top_k = std::max<int64_t>(1, dims.top_k);
  const auto mechanism = config.find("attn_mechanism");
  model.vanilla_attention = mechanism != config.end() && mechanism->is_string() && *mechanism == "vanilla";
  model.axes = ParallelAxisNamesOf(config);
  return model;
}

StatusOr<LayerActivations> LayerActivationBytes(const MemoryModel& model, bool moe, int64_t hidden, int64_t q,
                                                int64_t k, int64_t v, int64_t out, int64_t kv_length, int act_bytes,
                                                bool linear) {
  const schemas::ModelDims& dims = model.dims;
  // A per-token tensor of width `width`, sharded as the hidden state: hidden * width / hidden_size.
  auto width = [&](Checked w) { return CeilDiv(Checked(hidden) * w, dims.hidden); };
  const Checked h = hidden;
  // Attention scores [B, heads, S, kv_length]: the query's elements times kv_length / head_dim.
  const Checked score_elements = CeilDiv(CeilDiv(Checked(q), act_bytes) * kv_length, dims.head_dim);
  Checked attention_full, attention_dots;
  if (model.vanilla_attention) {
    // scores in attn_softmax_dtype (float32) and the probabilities in the activation dtype; both dots
    // (QK^T and probs.V) are matmul outputs.
    attention_full = score_elements * 4 + score_elements * act_bytes + out;
    attention_dots = score_elements * act_bytes + out;
  } else {
    // A fused kernel (flash / splash / ring ...) keeps its output and one float32 logsumexp per query row.
    attention_full = Checked(out) + CeilDiv(CeilDiv(Checked(q), act_bytes), dims.head_dim) * 4;
    attention_dots = Checked(0);
  }
  Checked mlp_full, mlp_dots;
  if (moe) {
    // A module's own loop over experts (DbrxExperts, PhiMoeSparseMoeBlock; kernels/model_experts.cc) runs
    // every expert on every token, so it keeps E copies where a routed path keeps top_k.
    const int64_t copies = model.moe_execution == schemas::ExpertsExecution::kExpertLoop ? dims.experts : dims.top_k;
    const Checked routed = width(Checked(copies) * dims.moe_intermediate);
    const Checked shared = width(dims.shared_intermediate);
    const Checked router = width(dims.experts);  // router logits, a dot
    // Every routed token copy's down_proj output, before the weighted combine: the combine's backward
    // needs them (d weight_k = <dy, y_k>). k copies of the hidden width; measured by `check --memory`.
    const Checked routed_out = width(Checked(copies) * dims.hidden);
    const Checked shared_out = dims.shared_intermediate > 0 ? h : Checked(0);  // the shared experts' down_proj
    // gate, up and their product for every routed token copy and the shared experts, the experts'
    // outputs, and the combine output, which is the layer's MLP output (h).
    mlp_full = router + routed * 3 + shared * 3 + routed_out + shared_out + h;
    // The dots: router, gate and up, and every down_proj output (the combine is not a dot).
    mlp_dots = router + routed * 2 + shared * 2 + routed_out + shared_out;
    if (model.moe_execution == schemas::ExpertsExecution::kPerTokenGather) {
      // GptOssExperts at EasyDeL c14e25c9 (kernels/model_gpt_oss.cc): each token's k gathered expert kernels,
      // gate_up [k, H, 2I] and down [k, I, H], and their biases are the einsums' operands, kept for the
      // backward (not dots: a dots policy recomputes the gathers). Their expert width keeps the kernels' tp
      // sharding, as the attention output's heads do: sized as that tensor is, per element of its width.
      const Checked inter = Checked(dims.top_k) * dims.moe_intermediate;
      auto tp_width = [&](Checked w) { return CeilDiv(Checked(out) * w, dims.heads * dims.head_dim); };
      mlp_full =
          mlp_full + tp_width(inter * dims.hidden * 3) + tp_width(inter * 2) + width(Checked(dims.top_k) * dims.hidden);
    } else if (model.moe_execution == schemas::ExpertsExecution::kScoreMaskedLoop) {
      // Llama4TextMoe at c14e25c9 (kernels/model_llama4.cc): E passes, each of every token through the stacked
      // experts: the scaled input, gate, up and their product at the experts' width, and the pass's output.
      const Checked pass_full = width(Checked(dims.moe_intermediate) * 3) + h * 2;
      const Checked pass_dots = width(Checked(dims.moe_intermediate) * 2) + h;
      mlp_full = router + pass_full * dims.experts + shared * 3 + shared_out + h;
      mlp_dots = router + pass_dots * dims.experts + shared * 2 + shared_out;
    }
  } else if (dims.gated_mlp) {
    const Checked inter = width(dims.intermediate);
    mlp_full = inter * 3;      // gate, up, act(gate) * up (the down_proj input)
    mlp_dots = inter * 2 + h;  // gate, up, down
  } else {
    const Checked inter = width(dims.intermediate);
    mlp_full = inter * 2;  // fc output, gelu output
    mlp_dots = inter + h;  // fc, proj
  }
  Checked qkv = Checked(q) + k + v;
  if (linear) {
    // Gated DeltaNet (transformers modeling_qwen3_next.py): in_proj_qkvz and in_proj_ba are the dots
    // (standing in for q/k/v); then the causal conv1d output and its SiLU over q, k, v, the delta rule's
    // per-chunk states (chunks of 64 tokens, float32, [value heads, key dim, value dim] each), its output,
    // and the gated norm's output, which o_proj reads.
    // Config integers: every product is checked.
    const Checked key_width = Checked(dims.linear_key_heads) * dims.linear_key_dim;
    const Checked value_width = Checked(dims.linear_value_heads) * dims.linear_value_dim;
    qkv = width(key_width * 2 + value_width * 2) + width(Checked(dims.linear_value_heads) * 2);
    const Checked conv = width(key_width * 2 + value_width);
    const Checked state = Checked(dims.linear_value_heads) * dims.linear_key_dim * dims.linear_value_dim;
    const Checked states = CeilDiv(width(state) * 4, int64_t{64} * act_bytes);
    attention_full = conv * 2 + states + width(value_width) * 2;
    attention_dots = Checked(0);
  }
  // Layer input, attention norm output, q/k/v, attention, o_proj output + residual, MLP norm output, MLP.
  const Checked full = h + h + qkv + attention_full + h + h + mlp_full;
  // The checkpointed function's argument (the layer input) is always kept.
  const Checked dots = h + qkv + attention_dots + h + mlp_dots;
  const Checked dots_no_batch = h + qkv + h + mlp_dots;
  LayerActivations result;
  EP_ASSIGN_OR_RETURN(result.full, Value(full, "activation"));
  EP_ASSIGN_OR_RETURN(result.dots, Value(dots, "activation"));
  EP_ASSIGN_OR_RETURN(result.dots_no_batch, Value(dots_no_batch, "activation"));
  return result;
}

namespace {

// ---- The steps of ComputeMemory -----------------------------------------------------------------------

/// One layer's activations on a device, as the step's activation plan lays them out.
struct StepShards {
  int64_t hidden = 0, q = 0, k = 0, v = 0, out = 0;  ///< bytes per device of one layer's tensors
  int64_t logits = 0;                                ///< the logits' bytes per device, 0 when absent
  int act_bytes = 2;                                 ///< bytes per activation element
  int64_t kv_length = 1;                             ///< the keys each query attends to
};

// Step 1: the shards of the step's hidden state, attention tensors and logits. The query's own head dim
// (MLA: qk_nope + qk_rope, not the config's head_dim) replaces `dims`' head_dim.
StepShards ReadStepShards(const ActivationPlan& step, schemas::ModelDims& dims) {
  StepShards shards;
  shards.hidden = StepBytes(step, "hidden_state");
  shards.q = StepBytes(step, "attention.query");
  shards.k = StepBytes(step, "attention.key");
  shards.v = StepBytes(step, "attention.value");
  shards.out = StepBytes(step, "attention.output");
  shards.logits = StepBytes(step, "logits");
  for (const ActivationTensor& t : step.tensors) {
    if (t.name == "hidden_state") shards.act_bytes = std::max(1, DTypeBits(t.dtype) / 8);
    if (t.name == "attention.key" && t.shape.rank() >= 2) shards.kv_length = t.shape.dims()[1];
    if (t.name == "attention.query" && t.shape.rank() == 4 && t.shape.dims()[3] > 0) dims.head_dim = t.shape.dims()[3];
  }
  return shards;
}

// Step 2: the activations a device holds, identical on every device of a stage (each tensor's largest
// shard): the saved set of every layer under the checkpointing policy plus one layer recomputed in
// training, one layer's working set in a forward-only step. Layers by kind: attention (softmax, or linear
// for layer_types "linear_attention") x MLP (dense or the routed experts), each kind's activations
// computed once. A pipelined stage saves its own layers for each microbatch its schedule keeps in flight
// (`in_flight`, planner/pipeline.h). Fills the breakdown's layer figures from the whole model.
class LayerActivationSet {
 public:
  static StatusOr<LayerActivationSet> Make(const MemoryModel& model, const StepShards& shards,
                                           const MemoryOptions& options, ActivationBreakdown& b) {
    LayerActivationSet set(model, shards, options);
    const schemas::ModelDims& dims = model.dims;
    bool used[2][2] = {{false, false}, {false, false}};
    for (int64_t i = 0; i < dims.layers; ++i) {
      const auto [linear, moe] = set.KindOf(i);
      used[linear][moe] = true;
    }
    for (int linear = 0; linear < 2; ++linear) {
      for (int moe = 0; moe < 2; ++moe) {
        if (!used[linear][moe]) continue;
        EP_ASSIGN_OR_RETURN(set.kinds_[linear][moe],
                            LayerActivationBytes(model, moe == 1, shards.hidden, shards.q, shards.k, shards.v,
                                                 shards.out, shards.kv_length, shards.act_bytes, linear == 1));
        b.layer_full = std::max(b.layer_full, set.kinds_[linear][moe].full);
        b.layer_saved = std::max(b.layer_saved, set.Saved(set.kinds_[linear][moe]));
      }
    }
    b.layers = dims.layers;
    const bool recomputes =
        options.policy != CheckpointPolicy::kNone && options.policy != CheckpointPolicy::kEverythingSaveable;
    b.outside = 2 * shards.hidden;  // embedding output, final norm output (a stage's input and output)
    b.recompute = options.mode == Mode::kTrain && recomputes ? b.layer_full : 0;
    return set;
  }

  /// The activations of `layers` (decoder layer numbers) with `in_flight` microbatches kept.
  StatusOr<int64_t> Bytes(const std::vector<int64_t>& layers, double in_flight, const ActivationBreakdown& b) const {
    if (options_.mode != Mode::kTrain) {
      // Forward only: one layer's working set at a time, plus the residual stream around it.
      return Value(Checked(b.layer_full) + b.outside, "activation");
    }
    Checked saved(0);
    for (int64_t i : layers) {
      const auto [linear, moe] = KindOf(i);
      saved = saved + Checked(Saved(kinds_[linear][moe]));
    }
    // In-flight microbatches are whole in 1F1B and GPipe (circular too: every chunk's forward runs before
    // any backward); the interleaved schedule keeps chunks, a
    // fraction of the stage: the stage's saved set scaled, rounded up to a byte.
    if (!saved.v || in_flight == 1.0) return Value(saved + b.recompute + b.outside, "activation");
    const double scaled = static_cast<double>(*saved.v) * in_flight;
    if (!(scaled < 9.2e18)) return Status::BadInput({}, "memory: activation byte count overflows int64");
    const Checked kept(static_cast<int64_t>(std::ceil(scaled)));
    return Value(kept + b.recompute + b.outside, "activation");
  }

 private:
  LayerActivationSet(const MemoryModel& model, const StepShards& shards, const MemoryOptions& options)
      : model_(model), shards_(shards), options_(options) {}

  std::pair<int, int> KindOf(int64_t i) const {
    const schemas::ModelDims& dims = model_.dims;
    const size_t at = static_cast<size_t>(i);
    const bool typed = static_cast<int64_t>(dims.layer_types.size()) == dims.layers;
    const bool linear = typed && at < dims.layer_types.size() && dims.layer_types[at] == "linear_attention";
    const bool moe = dims.experts > 0 && at < dims.moe_layer_mask.size() && dims.moe_layer_mask[at];
    return {linear ? 1 : 0, moe ? 1 : 0};
  }

  int64_t Saved(const LayerActivations& l) const {
    switch (options_.policy) {
      case CheckpointPolicy::kNone:
      case CheckpointPolicy::kEverythingSaveable:
        return l.full;
      case CheckpointPolicy::kNothingSaveable:
        return shards_.hidden;
      case CheckpointPolicy::kCheckpointDots:
        return l.dots;
      case CheckpointPolicy::kDotsNoBatchDims:
        return l.dots_no_batch;
    }
    return l.full;
  }

  const MemoryModel& model_;
  StepShards shards_;
  MemoryOptions options_;
  LayerActivations kinds_[2][2];
};

// Step 3: the logits block, float32 (the loss and the sampler upcast): the step's logits, else the
// hidden state's shard widened to the vocabulary.
StatusOr<int64_t> LogitsBytes(const schemas::ModelDims& dims, const StepShards& shards) {
  const Checked bytes = shards.logits > 0
                            ? CeilDiv(Checked(shards.logits) * 4, shards.act_bytes)
                            : CeilDiv(CeilDiv(Checked(shards.hidden) * dims.vocab, dims.hidden) * 4, shards.act_bytes);
  return Value(bytes, "logits");
}

// Step 4: the largest weight a device all-gathers for compute, over each layout group's first tensor.
// Weights keep their tp (and ep) sharding in the matmul; every other axis is all-gathered first. Stacked
// expert kernels stay sharded over the (folded) expert axis inside the MoE shard_map. On a pipelined
// plan, also per stage: the stage's largest such weight (`stage_largest`), and the bytes all of the
// stage's gathered weights add over their shards (`stage_kept`; a pipelining runtime keeps them
// gathered for the step).
struct GatheredWeights {
  std::vector<int64_t> stage_largest;
  std::vector<Checked> stage_kept;
};
GatheredWeights FindGatheredWeights(const Plan& plan, const ParamTree& tree, const MemoryModel& model,
                                    ActivationBreakdown& b) {
  const Mesh& mesh = plan.mesh;
  const int64_t stages = plan.pipeline.stages;
  GatheredWeights out{std::vector<int64_t>(static_cast<size_t>(stages), 0),
                      std::vector<Checked>(static_cast<size_t>(stages), Checked(0))};
  std::vector<int> first(plan.groups.size(), -1);
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const size_t g = static_cast<size_t>(plan.params[i].group);
    if (g < first.size() && first[g] < 0) first[g] = static_cast<int>(i);
  }
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    if (first[g] < 0) continue;
    const ParamPlan& param = plan.params[static_cast<size_t>(first[g])];
    const LayoutGroup& group = plan.groups[g];
    const Shape& shape = group.layout.shape();
    if (model.dims.experts > 0 && shape.rank() == 3 && shape.dims()[0] == model.dims.experts) continue;
    int64_t kept = 1;
    for (const PartitionSpec::Entry& entry : param.effective.entries()) {
      for (const std::string& axis : entry) {
        if (axis != model.axes.tp && axis != model.axes.ep) continue;
        if (std::optional<int> index = mesh.AxisIndex(axis)) kept *= mesh.shape[static_cast<size_t>(*index)];
      }
    }
    std::optional<int64_t> elements = shape.NumElements();
    if (!elements) continue;
    const Checked gathered = ElementBytes(CeilDiv(*elements, kept), group.bits);
    if (!gathered.v || *gathered.v <= group.MaxShardBytes()) continue;
    if (*gathered.v > b.gathered_weight) {
      b.gathered_weight = *gathered.v;
      b.gathered_name = tree.tensors[static_cast<size_t>(param.tensor)].name;
    }
    for (int64_t s = 0; s < stages; ++s) {
      if (!group.stages.On(s)) continue;
      int64_t& largest = out.stage_largest[static_cast<size_t>(s)];
      largest = std::max(largest, *gathered.v);
      Checked& total = out.stage_kept[static_cast<size_t>(s)];
      total = total + Checked(*gathered.v - group.MaxShardBytes()) * group.tensors;
    }
  }
  return out;
}

/// Gradients and optimizer state: a uniform group adds the same bytes to every device and is summed
/// once; the groups whose bytes differ between devices (experts held by some devices, uneven chunks)
/// are summed per device.
struct TrainingState {
  Checked uniform_grads, uniform_optimizer;
  std::vector<Checked> stage_grads, stage_optimizer;  ///< per pipeline stage: groups uniform on their stages
  bool per_device_groups = false;
  std::vector<Checked> grads, optimizer;  ///< per device, sized when a per-device group exists
};

// Step 5: each device's gradients and optimizer state, sharded with the parameters' specs.
TrainingState TrainingStateBytes(const Plan& plan, const MemoryOptions& options) {
  TrainingState state;
  const int64_t devices = plan.mesh.NumDevices();
  state.stage_grads.assign(static_cast<size_t>(plan.pipeline.stages), Checked(0));
  state.stage_optimizer.assign(static_cast<size_t>(plan.pipeline.stages), Checked(0));
  const int grad_bits = options.grad_dtype ? DTypeBits(*options.grad_dtype) : 0;
  const int opt_bits = DTypeBits(options.opt_state_dtype);
  for (const LayoutGroup& group : plan.groups) {
    const Shape& shape = group.layout.shape();
    const Shape& shard = group.layout.shard_shape();
    // optax.adafactor factors the second moment of a tensor whose last two dims are both >= 128
    // (min_dim_size_to_factor) into a row and a column vector.
    const bool factored = shape.rank() >= 2 && shape.dims()[static_cast<size_t>(shape.rank() - 1)] >= 128 &&
                          shape.dims()[static_cast<size_t>(shape.rank() - 2)] >= 128;
    const bool uniform = group.Uniform() && !group.expert_layout;
    // The gradient and optimizer-state bytes device d holds of one tensor of the group.
    auto held = [&](int64_t d) -> std::pair<Checked, Checked> {
      const Checked el = group.HeldBy(d) ? group.layout.ElementsOn(d) : 0;
      Checked states;
      switch (options.optimizer) {
        case Optimizer::kAdamW:
          states = ElementBytes(el, opt_bits) * 2;
          break;
        case Optimizer::kLion:
          states = ElementBytes(el, opt_bits);
          break;
        case Optimizer::kSgd:
          states = Checked(0);
          break;
        case Optimizer::kAdafactor:
          if (factored) {
            const int64_t rows = std::max<int64_t>(1, shard.dims()[static_cast<size_t>(shard.rank() - 2)]);
            const int64_t cols = std::max<int64_t>(1, shard.dims()[static_cast<size_t>(shard.rank() - 1)]);
            states = ElementBytes(CeilDiv(el, cols) + CeilDiv(el, rows), opt_bits);
          } else {
            states = ElementBytes(el, opt_bits);
          }
          break;
      }
      if (options.master_weights) states = states + ElementBytes(el, 32);
      return {ElementBytes(el, grad_bits > 0 ? grad_bits : group.bits), states};
    };
    if (uniform) {
      const auto [grad, states] = held(0);
      state.uniform_grads = state.uniform_grads + grad * group.tensors;
      state.uniform_optimizer = state.uniform_optimizer + states * group.tensors;
      continue;
    }
    if (group.tensors == 0) continue;
    if (group.Staged() && group.UniformOnItsStages() && !group.expert_layout) {
      // One device of each holding stage stands for the stage: the first device with that pp coordinate.
      for (int64_t s = 0; s < plan.pipeline.stages; ++s) {
        if (!group.stages.On(s)) continue;
        const auto [grad, states] = held(s * group.pp_stride);
        state.stage_grads[static_cast<size_t>(s)] = state.stage_grads[static_cast<size_t>(s)] + grad * group.tensors;
        state.stage_optimizer[static_cast<size_t>(s)] =
            state.stage_optimizer[static_cast<size_t>(s)] + states * group.tensors;
      }
      continue;
    }
    if (!state.per_device_groups) {
      state.grads.resize(static_cast<size_t>(devices));
      state.optimizer.resize(static_cast<size_t>(devices));
    }
    state.per_device_groups = true;
    for (int64_t d = 0; d < devices; ++d) {
      const auto [grad, states] = held(d);
      state.grads[static_cast<size_t>(d)] = state.grads[static_cast<size_t>(d)] + grad * group.tensors;
      state.optimizer[static_cast<size_t>(d)] = state.optimizer[static_cast<size_t>(d)] + states * group.tensors;
    }
  }
  return state;
}

/// The figures every device of a stage holds alike (one entry per pipeline stage; one without a pipeline).
struct SharedBytes {
  std::vector<int64_t> activations, kv_cache, transient;
  int64_t pp_stride = 1;  ///< a device's stage is device / pp_stride % stages
  size_t StageOf(int64_t device) const {
    return static_cast<size_t>(device / pp_stride % static_cast<int64_t>(activations.size()));
  }
};

// One device's figures. Without per-device groups only the parameters differ between devices, so the
// rest is summed once.
StatusOr<DeviceMemory> DeviceFigures(const Plan& plan, const TrainingState& state, const SharedBytes& shared,
                                     int64_t d) {
  DeviceMemory m;
  m.id = d;
  m.params = plan.device_bytes[static_cast<size_t>(d)];
  const size_t stage = shared.StageOf(d);
  const Checked own_grads = state.per_device_groups ? state.grads[static_cast<size_t>(d)] : Checked(0);
  const Checked own_optimizer = state.per_device_groups ? state.optimizer[static_cast<size_t>(d)] : Checked(0);
  const Checked stage_grads = stage < state.stage_grads.size() ? state.stage_grads[stage] : Checked(0);
  const Checked stage_optimizer = stage < state.stage_optimizer.size() ? state.stage_optimizer[stage] : Checked(0);
  EP_ASSIGN_OR_RETURN(m.grads, Value(own_grads + stage_grads + state.uniform_grads, "gradient"));
  EP_ASSIGN_OR_RETURN(m.optimizer, Value(own_optimizer + stage_optimizer + state.uniform_optimizer, "optimizer state"));
  m.activations = shared.activations[stage];
  m.kv_cache = shared.kv_cache[stage];
  m.transient = shared.transient[stage];
  EP_ASSIGN_OR_RETURN(
      m.total, Value(Checked(m.params) + m.grads + m.optimizer + m.activations + m.kv_cache + m.transient, "total"));
  return m;
}

// A pipelined plan's stages in stage order: each one's layers and the microbatches its schedule keeps in
// flight in training (one at a time when serving); their worst devices are filled in by the caller.
std::vector<StageMemory> StagesOf(const Plan& plan, const MemoryOptions& options) {
  std::vector<StageMemory> stages(static_cast<size_t>(plan.pipeline.stages));
  for (int64_t s = 0; s < plan.pipeline.stages; ++s) {
    StageMemory& stage = stages[static_cast<size_t>(s)];
    stage.stage = s;
    stage.layers = plan.pipeline.LayerCount(s);
    stage.in_flight = options.mode == Mode::kTrain ? InFlightMicrobatches(plan.pipeline, s, options.microbatches) : 1;
  }
  return stages;
}

// Step 6: every device's figures in device order and the worst device; with worst_only, the worst alone.
Status AddDevices(const Plan& plan, const TrainingState& state, const SharedBytes& shared, const MemoryOptions& options,
                  MemoryReport& report) {
  if (options.worst_only && !state.per_device_groups && !plan.pipeline.pipelined()) {
    // Only the parameters differ: the device with the most of them (the lowest id on ties) is the worst.
    const auto most = std::max_element(plan.device_bytes.begin(), plan.device_bytes.end());
    EP_ASSIGN_OR_RETURN(DeviceMemory worst, DeviceFigures(plan, state, shared, most - plan.device_bytes.begin()));
    report.devices.push_back(worst);
    return Status();
  }
  const int64_t devices = plan.mesh.NumDevices();
  const bool pipelined = plan.pipeline.pipelined();
  if (options.worst_only && !state.per_device_groups && pipelined) {
    // Within a stage only the parameters differ: each stage's device with the most of them stands for it.
    // A stage's devices come in runs of pp_stride ids (the pp coordinate changes between runs): each run is
    // scanned without computing each device's stage (suggest asks for thousands of reports on 16,384 chips).
    std::vector<int64_t> most(static_cast<size_t>(plan.pipeline.stages), -1);
    const auto bytes = plan.device_bytes.begin();
    for (int64_t first = 0; first < devices; first += shared.pp_stride) {
      int64_t& at = most[shared.StageOf(first)];
      const auto run_most = std::max_element(bytes + first, bytes + first + shared.pp_stride);  // its lowest id
      if (at < 0 || *run_most > bytes[at]) at = run_most - bytes;
    }
    report.stages = StagesOf(plan, options);
    for (size_t s = 0; s < most.size(); ++s) {
      EP_ASSIGN_OR_RETURN(report.stages[s].worst, DeviceFigures(plan, state, shared, most[s]));
    }
    std::stable_sort(report.stages.begin(), report.stages.end(),
                     [](const StageMemory& a, const StageMemory& b) { return a.worst.total > b.worst.total; });
    report.devices = {report.stages.front().worst};
    report.worst = 0;
    return Status();
  }
  report.devices.reserve(static_cast<size_t>(devices));
  if (pipelined) {
    report.stages = StagesOf(plan, options);
    for (StageMemory& stage : report.stages) stage.worst.total = -1;
  }
  for (int64_t d = 0; d < devices; ++d) {
    EP_ASSIGN_OR_RETURN(DeviceMemory m, DeviceFigures(plan, state, shared, d));
    if (m.total > (report.devices.empty() ? -1 : report.Worst().total)) report.worst = d;
    if (pipelined) {
      StageMemory& stage = report.stages[shared.StageOf(d)];
      if (m.total > stage.worst.total) stage.worst = m;
    }
    report.devices.push_back(m);
  }
  // The worst stage first (the lower stage on ties).
  std::stable_sort(report.stages.begin(), report.stages.end(),
                   [](const StageMemory& a, const StageMemory& b) { return a.worst.total > b.worst.total; });
  if (options.worst_only) {
    const DeviceMemory worst = report.Worst();
    report.devices = {worst};
    report.worst = 0;
  }
  return Status();
}

}  // namespace

StatusOr<MemoryReport> ComputeMemory(const MemoryInputs& inputs, const MemoryOptions& options) {
  EP_CHECK(inputs.plan != nullptr && inputs.tree != nullptr && inputs.step != nullptr, "ComputeMemory inputs");
  const Plan& plan = *inputs.plan;
  const ActivationPlan& step = *inputs.step;
  MemoryModel model = inputs.model;
  const bool train = options.mode == Mode::kTrain;
  if (!step.has_shapes) return Status::BadInput({}, "memory: the activation plan has no shapes (--batch/--seq)");

  MemoryReport report;
  report.mode = options.mode;
  report.options = options;
  report.budget_per_device = options.budget_per_device;
  ActivationBreakdown& b = report.breakdown;

  const StepShards shards = ReadStepShards(step, model.dims);
  EP_ASSIGN_OR_RETURN(const LayerActivationSet layer_set, LayerActivationSet::Make(model, shards, options, b));
  EP_ASSIGN_OR_RETURN(b.logits, LogitsBytes(model.dims, shards));
  const GatheredWeights gathered = FindGatheredWeights(plan, *inputs.tree, model, b);
  // Training also holds the unreduced full-size gradient of the gathered weight before its reduce-scatter.
  const Checked gathered_peak = Checked(b.gathered_weight) * (train ? 2 : 1);
  const int64_t cache = !train && inputs.cache != nullptr ? inputs.cache->cache_bytes_per_device : 0;

  // Per stage (one without a pipeline): its layers' activations for the microbatches its schedule keeps,
  // its layers' share of the KV cache, and the logits block on the last stage, which runs the head.
  const PipelineSplit& pipeline = plan.pipeline;
  SharedBytes shared;
  if (pipeline.pipelined()) {
    const std::optional<int> pp = plan.mesh.AxisIndex(std::string(kPipelineAxis));
    if (!pp) return Status::Internal("memory: a pipelined plan's mesh has no pp axis");
    shared.pp_stride = plan.mesh.Stride(*pp);
  }
  std::vector<int64_t> all_layers(static_cast<size_t>(std::max<int64_t>(0, model.dims.layers)));
  for (size_t i = 0; i < all_layers.size(); ++i) all_layers[i] = static_cast<int64_t>(i);
  for (int64_t s = 0; s < pipeline.stages; ++s) {
    const std::vector<int64_t> layers = pipeline.pipelined() ? pipeline.LayersOfStage(s) : all_layers;
    const double in_flight =
        pipeline.pipelined() && train ? InFlightMicrobatches(pipeline, s, options.microbatches) : 1;
    EP_ASSIGN_OR_RETURN(const int64_t activations, layer_set.Bytes(layers, in_flight, b));
    shared.activations.push_back(activations);
    const Checked stage_cache = pipeline.pipelined() && model.dims.layers > 0
                                    ? CeilDiv(Checked(cache) * static_cast<int64_t>(layers.size()), model.dims.layers)
                                    : Checked(cache);
    EP_ASSIGN_OR_RETURN(const int64_t kv, Value(stage_cache, "KV cache"));
    shared.kv_cache.push_back(kv);
    // The lm_head gather and the logits it produces are live together: the two add up. A stage gathers
    // only the weights it holds.
    const bool head = !pipeline.pipelined() || s == pipeline.stages - 1;
    Checked stage_gathered = gathered_peak;
    if (pipeline.pipelined()) {
      // Training: a pipelining runtime keeps the stage's weights gathered from the first forward to the
      // last backward and accumulates their unsharded gradients (torchtitan's FSDP default,
      // reshard_after_forward = not pp_enabled; Megatron-LM's distributed optimizer): both, over the shards.
      // Serving: the largest weight gathered at a time.
      stage_gathered = train ? gathered.stage_kept[static_cast<size_t>(s)] * 2
                             : Checked(gathered.stage_largest[static_cast<size_t>(s)]);
    }
    EP_ASSIGN_OR_RETURN(const int64_t transient, Value(stage_gathered + (head ? b.logits : 0), "transient"));
    shared.transient.push_back(transient);
  }
  const TrainingState state = train ? TrainingStateBytes(plan, options) : TrainingState();
  EP_RETURN_IF_ERROR(AddDevices(plan, state, shared, options, report));
  report.pipeline = pipeline;
  report.fits = report.Worst().total <= options.budget_per_device;
  return report;
}

}  // namespace easyplan::planner
