#ifndef EASYPLAN_KERNELS_SPMD_H_
#define EASYPLAN_KERNELS_SPMD_H_

// SPMD ops over DistTensors. Every op decides from its operands' specs, by general rules, which
// collectives it needs (as GSPMD does; docs/ARCHITECTURE.md "How check derives collectives"), then runs
// the same exact host op on every device's local block:
//  - Dot: as XLA's SPMD partitioner (xla/service/spmd/dot_handler.cc) partitions a dot whose output
//    sharding propagation inferred: the result takes the non-contracting shardings of both operands
//    (the user-consistent or larger operand first); each operand is gathered where its non-contracting
//    dims differ from the result's (tensor parallelism gathers the activation, FSDP the weight); a
//    contracting dim sharded alike on both operands gives a local partial product (the result is
//    `partial` over those axes, resolved by its user: a reduce-scatter into a sharded dim); sharded on
//    one operand only, the other is sliced locally when the axes are free in it.
//  - Reshard to a target spec: pending partial sums become a reduce-scatter when the target shards a
//    dim by exactly those axes, else an all-reduce; an entry that moves whole to another dim is an
//    all-to-all; an entry that is not a prefix of its target is all-gathered; a target that extends an
//    entry is a local slice (free).
//  - Elementwise ops align the second operand to the first (reshard); reductions over a sharded dim
//    reduce locally and all-reduce; reshapes keep a split dim's sharding on its major part when it
//    divides, else gather first.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/collectives.h"
#include "kernels/dist_tensor.h"
#include "kernels/host_tensor.h"
#include "kernels/live_meter.h"

namespace easyplan::kernels {

/// One Dot as every device runs it on its blocks, for the device with the most FLOPs.
struct MatmulRecord {
  std::string scope;             ///< the collectives' scope when it ran ("layer 0")
  std::string op;                ///< "self_attn/q_proj"
  int64_t flops = 0;             ///< 2 x multiply-adds
  int64_t elements = 0;          ///< operands' and result's elements: the HBM traffic, in elements
  int64_t operand_elements = 0;  ///< of `elements`, the operands' (read in the matmul's input precision)
  int64_t weight_elements = 0;   ///< of `operand_elements`, the rhs's when it is a parameter (a weight)
  /// The device's product as `batch` independent [m, k] x [k, n] matmuls: the products of the lhs's batch,
  /// free (m) and contracting (k) dims and of the rhs's free dims (n). Matmul efficiency depends on them
  /// (step/matmul_tiling.h).
  int64_t batch = 1, m = 1, n = 1, k = 1;
  int64_t device = 0;
  bool attention_core = false;  ///< attention's scores or their product with the values (Spmd::AttentionCore)
  bool routed_experts = false;  ///< a routed expert's matmul (Spmd::RoutedExperts): top-k of its rows are real
};

/// How a Dot runs beyond its operands.
struct DotOptions {
  /// The sharding the caller constrains the result to next (XLA's "user sharding"): it decides which
  /// operand's layout the result follows when the two disagree.
  const DistSpec* user = nullptr;
  /// An operand's pending partial sum passes through to the result instead of being all-reduced first
  /// (the op is linear in it and the caller resolves the sum later, as a shard_map body does).
  bool keep_partial = false;
  /// Logged as a matmul (the step model's compute). False for a dot that stands for data movement (the
  /// MoE's permutation of rows), which a runtime does not run as a matmul.
  bool matmul = true;
};

/// One memory-bound op (elementwise, reduction, gather of rows) as the busiest device runs it: the bytes it
/// reads from and writes to HBM. An op that consumes the previous op's result directly is fused with it,
/// as XLA's loop fusion keeps such a chain on chip: that result is neither written nor read again.
struct MemoryOpRecord {
  std::string scope;
  std::string op;
  int64_t read = 0, written = 0;  ///< bytes
  /// Inside attention's core (scores, mask, softmax): a fused attention kernel keeps these on chip.
  bool attention_core = false;
};

struct MatmulLog {
  std::vector<MatmulRecord> records;
  std::vector<MemoryOpRecord> memory_ops;
  std::map<std::string, std::vector<int64_t>> scope_flops;  ///< per scope, per device
};

/// The spec Spmd::Reshard gives a tensor of `shape` constrained to `wanted`: axes of size 1 dropped,
/// and a dim the constraint does not divide left replicated. What a pipeline stage knows of the hidden
/// state the previous stage sends it, without running that stage (kernels/pipeline_forward.h).
DistSpec ConstrainedSpec(const Dims& shape, const DistSpec& wanted, const MeshGeometry& geo);

class Spmd {
 public:
  explicit Spmd(Collectives& comm) : comm_(comm), geo_(comm.geo()) {}
  Collectives& comm() { return comm_; }
  const MeshGeometry& geo() const { return geo_; }

  /// Charges every tensor a (non-nested) op returns to `meter` from here on; nullptr stops. The meter
  /// must outlive the tensors charged to it.
  void set_meter(LiveMeter* meter) {
    reshards_.clear();  // their charges belong to the meter that is going
    meter_ = meter;
  }
  LiveMeter* meter() const { return meter_; }
  /// Records every Dot in `log` from here on (nullptr stops): the step-time model's compute term.
  void set_matmul_log(MatmulLog* log) { matmuls_ = log; }
  /// Sets one of Spmd's marks while it lives and restores the mark's previous value after.
  class ScopedMark {
   public:
    explicit ScopedMark(bool& mark) : mark_(mark), was_(mark) { mark = true; }
    ~ScopedMark() { mark_ = was_; }
    ScopedMark(const ScopedMark&) = delete;
    ScopedMark& operator=(const ScopedMark&) = delete;

   private:
    bool& mark_;
    bool was_;
  };
  /// Marks the matmuls run while it lives as the routed experts' (MatmulRecord::routed_experts).
  class RoutedExperts : public ScopedMark {
   public:
    explicit RoutedExperts(Spmd& spmd) : ScopedMark(spmd.routed_experts_) {}
  };
  /// Marks the ops run while it lives as attention's core (MemoryOpRecord::attention_core).
  class AttentionCore : public ScopedMark {
   public:
    explicit AttentionCore(Spmd& spmd) : ScopedMark(spmd.attention_core_) {}
  };
  /// Stops charging `t` (what the model keeps apart from its activations: the KV cache).
  void Untrack(DistTensor& t) const;

  /// A full tensor known to every device (inputs, constants), laid out by `spec` without communication.
  DistTensor Place(const HostTensor& full, const DistSpec& spec) const;

  /// Moves `t` to `target` (target.partial must be empty).
  DistTensor Reshard(DistTensor t, const DistSpec& target, const std::string& why);
  /// All-reduces every pending partial sum.
  DistTensor Resolve(DistTensor t, const std::string& why);

  /// Operands are only copied when they need a collective or a local slice.
  DistTensor Dot(const DistTensor& lhs, const DistTensor& rhs, const DotDims& dims, const std::string& why,
                 const DotOptions& options = {});

  /// Elementwise f(x).
  DistTensor Map(DistTensor t, const std::function<double(double)>& f);
  /// f(x, global index) for position-dependent ops (masks, rotary embeddings). REQUIRES no partial.
  DistTensor MapIndexed(DistTensor t, const std::function<double(double, const Dims&)>& f);
  /// Elementwise f(a, b) with numpy broadcasting of size-1 dims; equal ranks.
  DistTensor Binary(DistTensor a, DistTensor b, const std::function<double(double, double)>& f, const std::string& why,
                    bool linear_add = false);
  DistTensor Add(DistTensor a, DistTensor b, const std::string& why);
  DistTensor Mul(DistTensor a, DistTensor b, const std::string& why);

  /// Sum or max over `dim`, kept with size 1.
  DistTensor Reduce(DistTensor t, int dim, ReduceOp op, const std::string& why);
  /// Softmax over `dim`.
  DistTensor Softmax(DistTensor t, int dim, const std::string& why);

  /// Inserts a size-1 dim at `dim` / removes the size-1 dim `dim`.
  DistTensor Unsqueeze(DistTensor t, int dim) const;
  DistTensor Squeeze(DistTensor t, int dim) const;
  /// Runs `f` on every device's block after gathering the dims in `whole` (ops that mix elements
  /// along a dim: rotary embeddings, top-k). `box` is the block's global position. REQUIRES no partial.
  DistTensor Local(DistTensor t, const std::vector<int>& whole,
                   const std::function<void(HostTensor&, const std::vector<Range>& box)>& f, const std::string& why);
  /// Prepends size-1 dims up to `rank`.
  DistTensor Lift(DistTensor t, int rank) const;
  DistTensor Transpose(DistTensor t, const std::vector<int>& perm) const;
  /// Splits `dim` into (major, size/major).
  DistTensor Split(DistTensor t, int dim, int64_t major, const std::string& why);
  /// Merges `dim` and `dim + 1`.
  DistTensor Merge(DistTensor t, int dim, const std::string& why);
  /// [start, start + length) of `dim`.
  DistTensor Narrow(DistTensor t, int dim, int64_t start, int64_t length, const std::string& why);
  /// Repeats the size-1, unsharded `dim` `size` times (a value shared by every head, say).
  DistTensor Broadcast(DistTensor t, int dim, int64_t size) const;
  /// `a` then `b` along `dim` (equal shapes elsewhere): `dim` is gathered, `b` takes `a`'s layout.
  DistTensor Concat(DistTensor a, DistTensor b, int dim, const std::string& why);

  /// table[ids] for a [V, ...] table (an embedding [V, H], stacked expert kernels [E, in, out]) and
  /// integer-valued ids of any rank: [ids..., ...], taking rows along dim 0.
  DistTensor Embed(DistTensor table, DistTensor ids, const std::string& why);

 private:
  DistTensor LocalSlice(DistTensor t, int dim, const std::vector<int>& axes) const;
  /// Reshard, once per value and target: a later request for the same value in the same layout reuses
  /// the first result and moves nothing (XLA's CSE of identical collectives).
  DistTensor ReshardOnce(const DistTensor& t, const DistSpec& target, const std::string& why);
  /// An operand of a memory-bound op, seen before the op runs: which value it is and its largest block.
  struct Operand {
    uint64_t value = 0;
    int64_t elements = 0;
  };
  static Operand OperandOf(const DistTensor& t);
  /// Records a memory-bound op in matmuls_ (set): its operands read (unless fused with the previous op's
  /// result) and `out` written. Returns `out`.
  DistTensor LogMemoryOp(std::vector<Operand> inputs, DistTensor out, const std::string& why);
  /// Records a Dot's per-device FLOPs and its busiest device in matmuls_ (set).
  void LogMatmul(const DistTensor& x, const DistTensor& y, const DistTensor& out, const DotDims& dims,
                 const std::string& why);

  // Ops call one another (Softmax reduces, Dot reshards its operands): only the outermost op's result
  // is something the model holds, so only it is charged; gathered operands inside a Dot are transient.
  struct Nest {
    explicit Nest(const Spmd* owner) : spmd(owner) { ++spmd->depth_; }
    ~Nest() { --spmd->depth_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
    const Spmd* spmd;
  };
  /// `t`, charged to the meter when this is the outermost op.
  /// `same_value`: `t` holds the value it held (a constraint that moves nothing): it keeps its value id.
  DistTensor Track(DistTensor t, bool same_value = false) const;

  struct ReshardMemo {
    uint64_t source = 0;
    /// The source's meter charge: once it is released the source is dead, and so is the memo entry
    /// (a gathered activation lives as long as the value it was gathered from is used).
    std::weak_ptr<const void> source_live;
    bool source_charged = false;
    DistSpec target;
    DistTensor result;  ///< charged to the meter while the entry lives (an activation's gathered copy)
  };
  /// The last few operand reshards (a block's q/k/v, or gate/up, share one input).
  static constexpr size_t kReshardMemoSize = 8;

  Collectives& comm_;
  const MeshGeometry& geo_;
  std::vector<ReshardMemo> reshards_;
  bool attention_core_ = false;
  bool routed_experts_ = false;
  uint64_t last_memory_value_ = 0;  ///< the previous memory-bound op's result (fusion)
  mutable uint64_t last_value_id_ = 0;
  LiveMeter* meter_ = nullptr;
  MatmulLog* matmuls_ = nullptr;
  mutable int depth_ = 0;
};

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_SPMD_H_
