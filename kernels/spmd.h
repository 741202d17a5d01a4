#ifndef EASYPLAN_KERNELS_SPMD_H_
#define EASYPLAN_KERNELS_SPMD_H_

// SPMD ops over DistTensors. Every op decides from its operands' specs, by general rules, which
// collectives it needs (as GSPMD does; docs/ARCHITECTURE.md "How check derives collectives"), then runs
// the same exact host op on every device's local block:
//  - Dot: batch dims follow the lhs; an axis that would appear twice in the result, or on a contracting
//    dim of one operand and a non-contracting dim of the other, is gathered away; a contracting dim
//    sharded the same way on both operands gives a local partial product (the result is `partial` over
//    those axes); sharded on one operand only, the other operand is sliced locally when the axes are
//    free in it, else the cheaper operand is gathered.
//  - Reshard to a target spec: pending partial sums become a reduce-scatter when the target shards a
//    dim by exactly those axes, else an all-reduce; an entry that moves whole to another dim is an
//    all-to-all; an entry that is not a prefix of its target is all-gathered; a target that extends an
//    entry is a local slice (free).
//  - Elementwise ops align the second operand to the first (reshard); reductions over a sharded dim
//    reduce locally and all-reduce; reshapes keep a split dim's sharding on its major part when it
//    divides, else gather first.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernels/collectives.h"
#include "kernels/dist_tensor.h"
#include "kernels/host_tensor.h"
#include "kernels/live_meter.h"

namespace easyplan::kernels {

/// One Dot as every device runs it on its blocks, for the device with the most FLOPs.
struct MatmulRecord {
  std::string scope;     ///< the collectives' scope when it ran ("layer 0")
  std::string op;        ///< "self_attn/q_proj"
  int64_t flops = 0;     ///< 2 x multiply-adds
  int64_t elements = 0;  ///< operands' and result's elements: the HBM traffic, in elements
  int64_t device = 0;
};

struct MatmulLog {
  std::vector<MatmulRecord> records;
  std::map<std::string, std::vector<int64_t>> scope_flops;  ///< per scope, per device
};

class Spmd {
 public:
  explicit Spmd(Collectives& comm) : comm_(comm), geo_(comm.geo()) {}
  Collectives& comm() { return comm_; }
  const MeshGeometry& geo() const { return geo_; }

  /// Charges every tensor a (non-nested) op returns to `meter` from here on; nullptr stops. The meter
  /// must outlive the tensors charged to it.
  void set_meter(LiveMeter* meter) { meter_ = meter; }
  LiveMeter* meter() const { return meter_; }
  /// Records every Dot in `log` from here on (nullptr stops): the step-time model's compute term.
  void set_matmul_log(MatmulLog* log) { matmuls_ = log; }
  /// Stops charging `t` (what the model keeps apart from its activations: the KV cache).
  void Untrack(DistTensor& t) const;

  /// A full tensor known to every device (inputs, constants), laid out by `spec` without communication.
  DistTensor Place(const HostTensor& full, const DistSpec& spec) const;

  /// Moves `t` to `target` (target.partial must be empty).
  DistTensor Reshard(DistTensor t, const DistSpec& target, const std::string& why);
  /// All-reduces every pending partial sum.
  DistTensor Resolve(DistTensor t, const std::string& why);

  /// Operands are only copied when they need a collective or a local slice.
  DistTensor Dot(const DistTensor& lhs, const DistTensor& rhs, const DotDims& dims, const std::string& why);

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

  /// table[ids] for a [V, H] table and integer-valued ids of any rank: [ids..., H].
  DistTensor Embed(DistTensor table, DistTensor ids, const std::string& why);

 private:
  DistTensor LocalSlice(DistTensor t, int dim, const std::vector<int>& axes) const;
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
  DistTensor Track(DistTensor t) const;

  Collectives& comm_;
  const MeshGeometry& geo_;
  LiveMeter* meter_ = nullptr;
  MatmulLog* matmuls_ = nullptr;
  mutable int depth_ = 0;
};

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_SPMD_H_
