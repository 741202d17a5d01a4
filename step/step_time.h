#ifndef EASYPLAN_STEP_STEP_TIME_H_
#define EASYPLAN_STEP_STEP_TIME_H_

// The step-time model of `easyplan cost` (issue 19): a dry run's matmuls and collectives
// (kernels/dry_run.h) priced on a hardware profile (step/hardware.h).
//  - Compute: each matmul of the busiest device takes the roofline maximum of FLOPs / (peak x matmul
//    efficiency at its per-device shape, step/matmul_tiling.h) and operand bytes / (HBM bandwidth x
//    HBM efficiency). MoE expert matmuls, which the
//    reference forward computes densely, count top_k / experts of their FLOPs: the tokens each expert
//    receives under top-k routing, on average. Training is forward + backward (twice the forward's
//    matmuls: the input and the weight gradients) + the recomputation the checkpoint policy implies:
//    nothing_saveable recomputes the whole forward, checkpoint_dots_with_no_batch_dims the matmuls with
//    batch dims (attention's q.k and p.v; projections are dots without batch dims and stay saved), the
//    other policies nothing that costs a matmul.
//  - Decode: a one-token forward plus, per attention layer, the scores against the KV cache: FLOPs
//    4 x batch x heads x cache tokens x head dim on the device's shard, bytes the layer's cache.
//  - Communication: the dry run's records and nothing else. Every collective of the forward; in the
//    backward its transpose (all-gather <-> reduce-scatter, all-reduce and all-to-all as themselves)
//    and, for a parameter all-gather (FSDP), the gather again; the gradient sync the dry run recorded
//    (kernels/step_records.h), once per step. A pipeline's stage sends are priced by its schedule
//    (step/pipeline_step.h). A collective over a group of g costs latency x ring steps + bytes / (bandwidth x link
//    efficiency) on the links its group spans: the network when one of its axes crosses slices (--dcn)
//    or its devices leave one fast domain, else the fast domain.
//  - Overlap: parameter gathers and gradient reductions are prefetched or deferred behind compute
//    (FSDP's schedule), so only what exceeds the compute is exposed; activation collectives (tensor
//    parallel all-reduces, expert all-to-alls) sit on the critical path and are exposed whole.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/mesh.h"
#include "core/mode.h"
#include "core/status.h"
#include "kernels/dry_run.h"
#include "planner/memory.h"
#include "planner/plan.h"
#include "step/hardware.h"
#include "step/torus.h"

namespace easyplan::step {

struct StepOptions {
  Mode mode = Mode::kTrain;  ///< train, or a serving step: prefill or decode (decode_cache_tokens)
  planner::CheckpointPolicy remat = planner::CheckpointPolicy::kNone;
  int64_t microbatches = 1;     ///< gradient accumulation steps per optimizer step (train)
  bool flash_attention = true;  ///< attention scores stay on chip: their matmuls are compute-bound
  /// The projections (every matmul but attention's q.k and p.v) run in fp8 at peak_flops_fp8, as
  /// torchao's float8 linears and Transformer Engine's fp8 recipes do; attention stays bf16.
  bool fp8_matmuls = false;
  /// Serving, one decode step: each attention layer also reads its whole KV cache (`decode_cache_tokens`
  /// positions, `kv_cache_bytes` per device over all layers) for one new token per sequence, which the
  /// dry run of a one-token forward does not contain. 0 = not a decode step.
  int64_t decode_cache_tokens = 0;
  int64_t kv_cache_bytes = 0;
  /// Training, once per step: the bytes the optimizer update reads and writes (parameters, gradients,
  /// optimizer state) and gradient accumulation adds, per device.
  int64_t update_bytes = 0;
  /// Training, per microbatch: the bytes the loss reads and writes over the logits (forward and backward).
  int64_t loss_bytes = 0;
  /// A TPU slice's torus dims as given (step::LayOutSlice); empty: Cloud TPU's topology for the
  /// slice's chip count.
  std::vector<int64_t> torus;
};

/// One collective over the mesh axes `axes` (a group of `group` devices, `bytes_per_device` received by
/// each), as PriceStep prices it: on the network when the group leaves a fast domain or crosses slices
/// (NCCL's split of the ring's steps across domains), else on the fast links, over the dims of `torus`
/// the group spans when the chips form one (a TPU slice; null otherwise).
double CollectiveSeconds(const step::HardwareProfile& hw, const Mesh& mesh, const std::vector<int>& axes,
                         kernels::CollectiveKind kind, int64_t group, int64_t bytes_per_device,
                         const step::TorusSlice* torus = nullptr);

/// Bytes per device of each collective kind (all-gather, reduce-scatter, all-reduce, all-to-all), and of
/// a pipeline's stage-to-stage sends (send/recv).
struct KindBytes {
  int64_t all_gather = 0, reduce_scatter = 0, all_reduce = 0, all_to_all = 0, send_recv = 0;
  void Add(kernels::CollectiveKind kind, int64_t bytes);
  int64_t Total() const { return all_gather + reduce_scatter + all_reduce + all_to_all + send_recv; }
};

/// One collective as the step runs it (a forward record, its backward counterpart, a gradient sync).
struct PricedCollective {
  std::string phase;  ///< "forward", "backward", "recompute", "gradient"
  std::string scope;  ///< "layer 0", "embed", ...; "all layers" for the gradient sync
  std::string op;
  kernels::CollectiveKind kind = kernels::CollectiveKind::kAllGather;
  std::string axes;  ///< "fsdp", "(fsdp, tp)"
  int64_t group = 0;
  int64_t count = 1;             ///< how many times per step (layers x microbatches)
  int64_t bytes_per_device = 0;  ///< one occurrence
  std::string link;              ///< "fast" (NVLink / ICI) or "network" (InfiniBand / DCN)
  double seconds = 0;            ///< one occurrence
  bool overlapped = false;       ///< hidden behind compute when there is enough of it
};

struct LayerCost {
  std::string scope;
  int64_t count = 1;                          ///< the layers it stands for
  double compute_s = 0, communication_s = 0;  ///< one occurrence, forward only
};

/// A TPU slice the collectives were priced on: its torus and the in-slice mesh laid on it.
struct SliceTopology {
  step::TorusSlice torus;
  std::vector<int64_t> ici;  ///< the mesh's in-slice axis sizes, in mesh order
  int64_t chips = 0;         ///< the slice's
};

struct StepCost {
  double compute_s = 0;                ///< the busiest device's matmuls, all phases
  double communication_s = 0;          ///< every collective, all phases
  double exposed_communication_s = 0;  ///< what overlap does not hide
  double step_time_s = 0;              ///< compute + exposed communication
  int64_t forward_flops = 0;           ///< the busiest device, one forward of one microbatch (top-k counted)
  int64_t step_flops = 0;              ///< the busiest device, the whole step
  double recompute_s = 0;              ///< of compute_s: the forward work the checkpoint policy repeats
  double memory_bound_s = 0;           ///< of compute_s: memory-bound ops, the loss and the optimizer update
  double update_s = 0;                 ///< of compute_s: the optimizer update, once per step
  KindBytes forward, backward;         ///< per device, one forward / backward of one microbatch
  std::vector<PricedCollective> collectives;
  std::vector<LayerCost> layers;
  /// One microbatch, split as a pipeline schedule needs it (step/pipeline_step.h).
  struct Microbatch {
    double forward_s = 0;           ///< forward compute: matmuls, memory-bound ops, the loss
    double backward_s = 0;          ///< backward compute with its recomputation
    double weight_gradient_s = 0;   ///< of backward_s: the weight gradients (the forward's matmul time)
    double forward_exposed_s = 0;   ///< activation collectives of the forward, on the critical path
    double backward_exposed_s = 0;  ///< of the backward and the recomputation
    double parameter_s = 0;         ///< parameter gathers and their gradients' reduce-scatters (overlappable)
    double parameter_gather_s = 0;  ///< of parameter_s: the forward's gathers
    double parameter_reduce_s = 0;  ///< of parameter_s: the gradients' reduce-scatters

    /// Field by field, the mean of `a` and `b` (DualPipe: a device's two stages, each half the microbatches).
    static Microbatch Mean(const Microbatch& a, const Microbatch& b);
  } microbatch;
  double gradient_sync_s = 0;  ///< the gradient all-reduce over the data axes, once per step (overlappable)
  /// The share of attention's q.k and p.v FLOPs a fused kernel computes on the busiest device: it skips
  /// the blocks above the causal diagonal (AttentionCausalShare). 1 for vanilla attention and decode.
  double attention_causal_share = 1;
  /// A TPU slice: the torus it was priced on and how the mesh lies on it (api/topology_lines.h says it
  /// in words: docs/COST.md, "The topology").
  std::optional<SliceTopology> slice;
};

/// The share of a causal attention's score blocks a fused kernel computes on the busiest device when the
/// sequence is split over `sequence_shards` devices: 1/2 unsharded (FlashAttention-2 counts a causal
/// kernel's FLOPs as half the full product, Dao 2023, section 4.1), and 1 - 1/(2 x shards) for the shard
/// holding the last queries, which attend to every earlier key.
double AttentionCausalShare(int64_t sequence_shards);

/// Prices `run` (a dry run of one microbatch over a plan on `mesh`, with its step records:
/// kernels/step_records.h) on `hardware`: its records and nothing else. BadInput when the profile lacks a
/// figure the mode needs.
StatusOr<StepCost> PriceStep(const kernels::DryRunReport& run, const Mesh& mesh, const kernels::ModelDesc& model,
                             const step::HardwareProfile& hardware, const StepOptions& options);

}  // namespace easyplan::step

#endif  // EASYPLAN_STEP_STEP_TIME_H_
