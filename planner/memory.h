#ifndef EASYPLAN_PLANNER_MEMORY_H_
#define EASYPLAN_PLANNER_MEMORY_H_

// Memory per device for training and serving (`easyplan memory`, docs/MEMORY.md): parameters from the
// plan, gradients and optimizer state sharded with the parameters' specs, activations per layer under a
// gradient-checkpointing policy sharded as the activation specs say, the KV cache as EasyDeL stores it,
// and the transient peaks (the largest weight all-gathered for compute, the logits block). Pure
// functions over a Plan, activation plans and options; every byte count is checked 64-bit arithmetic.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/document.h"
#include "core/dtype.h"
#include "core/json.h"
#include "core/mode.h"
#include "core/param_tree.h"
#include "core/status.h"
#include "planner/activations.h"
#include "planner/expert_mesh.h"
#include "planner/pipeline.h"
#include "planner/plan.h"
#include "schemas/forward_structure.h"
#include "schemas/model_dims.h"

namespace easyplan::planner {

/// Optimizer state per parameter element: adamw 2 (m, v), lion 1 (m), sgd 0 (optax.sgd without
/// momentum), adafactor a factored second moment (row + column vectors for matrices, else one).
enum class Optimizer { kAdamW, kAdafactor, kLion, kSgd };
inline constexpr Optimizer kOptimizers[] = {Optimizer::kAdamW, Optimizer::kAdafactor, Optimizer::kLion,
                                            Optimizer::kSgd};
std::string_view OptimizerName(Optimizer optimizer);
std::optional<Optimizer> ParseOptimizer(std::string_view text);

/// The gradient_checkpointing policies the model covers ("" is none; dots_saveable is checkpoint_dots,
/// dots_with_no_batch_dims_saveable is checkpoint_dots_with_no_batch_dims, as in jax.checkpoint_policies).
enum class CheckpointPolicy { kNone, kEverythingSaveable, kNothingSaveable, kCheckpointDots, kDotsNoBatchDims };
std::string_view CheckpointPolicyName(CheckpointPolicy policy);
/// nullopt for a policy EasyDeL accepts but the model does not cover (save_only_these_names, ...).
std::optional<CheckpointPolicy> ParseCheckpointPolicy(std::string_view text);

/// What the memory model reads about the model: its dims (schemas/model_dims.h, normalised below) and
/// two settings of the config that change what a layer keeps.
struct MemoryModel {
  /// head_dim is at least 1; top_k is at least 1 for a MoE model.
  schemas::ModelDims dims;
  bool vanilla_attention = false;  ///< attn_mechanism "vanilla": scores and probabilities are materialised
  ParallelAxisNames axes;          ///< partition_axis: which mesh axes a matmul keeps its weight sharded on
  /// How the MoE block runs its experts (the forward structure's moe.execution, schemas/forwards.yaml): what
  /// a MoE layer keeps for the backward depends on it (LayerActivationBytes).
  schemas::ExpertsExecution moe_execution = schemas::ExpertsExecution::kFusedMoe;
};
/// The memory model of a resolved config's dims; `config` is the geometry config
/// (schemas::GeometryConfig), which holds attn_mechanism and partition_axis. Errors: hidden_size,
/// num_hidden_layers, vocab_size or num_attention_heads missing (memory needs them all).
StatusOr<MemoryModel> MemoryModelOf(const schemas::ModelDims& dims, const Json& config);

struct MemoryOptions {
  Mode mode = Mode::kTrain;
  Optimizer optimizer = Optimizer::kAdamW;
  std::optional<DType> grad_dtype;  ///< nullopt: each parameter's own dtype
  DType opt_state_dtype = DType::kFloat32;
  bool master_weights = false;  ///< a float32 copy of every parameter, counted with the optimizer
  CheckpointPolicy policy = CheckpointPolicy::kNone;
  int64_t budget_per_device = 0;
  /// Keep only the worst device in MemoryReport::devices (suggest ranks candidates by it; a report of
  /// 16,384 devices per candidate would cost more than the candidate's whole estimate).
  bool worst_only = false;
  /// The microbatches of a step (each runs the activation plan's batch). A pipelined plan's stages keep
  /// InFlightMicrobatches of them (planner/pipeline.h); without a pipeline one is live at a time.
  int64_t microbatches = 1;
};

/// Bytes one device holds, per category (0 where a category does not apply to the mode).
struct DeviceMemory {
  int64_t id = 0;
  int64_t params = 0, grads = 0, optimizer = 0, activations = 0, kv_cache = 0, transient = 0, total = 0;
};

/// How the activation and transient figures were reached, for the table and for tests.
struct ActivationBreakdown {
  int64_t layer_full = 0;   ///< one layer's saved set with nothing recomputed
  int64_t layer_saved = 0;  ///< one layer's saved set under the policy
  int64_t recompute = 0;    ///< one layer recomputed during the backward (0 without recomputation)
  int64_t outside = 0;      ///< embedding output and final norm output
  int64_t layers = 0;
  int64_t logits = 0;           ///< the float32 logits block
  int64_t gathered_weight = 0;  ///< the largest weight all-gathered for compute (x2 in training)
  std::string gathered_name;    ///< the tensor it is
};

/// One pipeline stage's figures: its layers, the microbatches its schedule keeps, its worst device.
struct StageMemory {
  int64_t stage = 0;
  int64_t layers = 0;
  double in_flight = 1;  ///< microbatches of activations at the schedule's peak
  DeviceMemory worst;    ///< the stage's device with the largest total
};

struct MemoryReport {
  Mode mode = Mode::kTrain;
  MemoryOptions options;
  std::vector<DeviceMemory> devices;  ///< in device order; only the worst with options.worst_only
  int64_t worst = 0;                  ///< index into devices of the largest total (lowest id on ties)
  int64_t budget_per_device = 0;
  bool fits = true;
  ActivationBreakdown breakdown;
  /// A pipelined plan: its pipeline, and one entry per stage, the worst stage first (empty without one).
  PipelineSplit pipeline;
  std::vector<StageMemory> stages;
  /// The device with the largest total.
  const DeviceMemory& Worst() const { return devices[static_cast<size_t>(worst)]; }
};

/// Inputs of the model. `step` is the activation plan with --batch/--seq (train mode for training,
/// prefill for serving); `cache` the plan whose KV cache serving holds (seq = --max-length), else null.
struct MemoryInputs {
  const Plan* plan = nullptr;
  const ParamTree* tree = nullptr;
  const ActivationPlan* step = nullptr;
  const ActivationPlan* cache = nullptr;
  MemoryModel model;
};

/// Computes the per-device memory. Errors: a byte count that overflows int64, an activation plan
/// without shapes.
StatusOr<MemoryReport> ComputeMemory(const MemoryInputs& inputs, const MemoryOptions& options);

/// Per-layer activation bytes of one device from its shard sizes (exposed for tests and docs):
/// `hidden`, `q`, `k`, `v`, `out` are the bytes per device of one layer's hidden state, query, key,
/// value and attention output; `kv_length` the keys each query attends to; `act_bytes` bytes per element.
struct LayerActivations {
  int64_t full = 0;           ///< everything the backward needs, nothing recomputed
  int64_t dots = 0;           ///< only matmul outputs (checkpoint_dots)
  int64_t dots_no_batch = 0;  ///< matmul outputs without batch dims (projections, not attention)
};
/// `moe`: the layer's MLP is the routed experts (plus shared ones) instead of the dense MLP. `linear`: the
/// layer's attention is Qwen3-Next's Gated DeltaNet (layer_types "linear_attention") instead of softmax
/// attention over q, k and v.
StatusOr<LayerActivations> LayerActivationBytes(const MemoryModel& model, bool moe, int64_t hidden, int64_t q,
                                                int64_t k, int64_t v, int64_t out, int64_t kv_length, int act_bytes,
                                                bool linear = false);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_MEMORY_H_
