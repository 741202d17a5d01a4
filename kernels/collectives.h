#ifndef EASYPLAN_KERNELS_COLLECTIVES_H_
#define EASYPLAN_KERNELS_COLLECTIVES_H_

// Collectives between simulated devices, with byte accounting. Each one moves data only inside its
// groups (the devices that differ only on the collective's mesh axes), through a Transport
// (kernels/transport.h: in this process, or MPI's collectives), and records what every device
// receives, with the usual ring costs for a group of g devices and a per-device block of S bytes (the
// block the transport handed to its engine):
//   all-gather      (g-1)·S            (S = the block before the gather)
//   reduce-scatter  (g-1)/g·S          (S = the unreduced block)
//   all-reduce      2·(g-1)/g·S        (reduce-scatter + all-gather)
//   all-to-all      (g-1)/g·S
//   send/recv       S                  (a pipeline stage boundary: each device of the receiving stage
//                                       gets its counterpart's block; kernels/pipeline_forward.h)
// Collectives over axes of size 1 are no-ops and are not recorded.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dist_tensor.h"
#include "kernels/transport.h"

namespace easyplan::kernels {

/// kSendRecv is point to point, not a collective: the send of a pipeline stage's hidden state to the
/// next stage (Megatron-LM's p2p_communication send_forward / recv_forward), recorded beside them.
enum class CollectiveKind { kAllGather, kReduceScatter, kAllReduce, kAllToAll, kSendRecv };
inline constexpr int kCollectiveKinds = 5;
std::string_view CollectiveName(CollectiveKind kind);  // "all-gather", ..., "send/recv"

struct CommRecord {
  CollectiveKind kind;
  std::string scope;  ///< "embed", "layer 0", "final", ...
  std::string op;     ///< the op that needed it, e.g. "self_attn/o_proj: contracting dim sharded on both operands"
  std::string tensor_spec;  ///< the operand's spec before the collective
  int64_t group_size = 0;
  int64_t bytes_per_device = 0;  ///< received by every device (groups are uniform)
  bool parameter = false;        ///< the operand was a model parameter (DistTensor::parameter)
  std::vector<int> axes;         ///< the mesh axes of the group
  /// How the step model prices this collective in the backward pass: as its transpose (all-gather <->
  /// reduce-scatter, the others as themselves), not at all (a shard_map boundary whose input gradient
  /// is a psum of its own), or only there (that psum: nothing moves in the forward pass).
  enum class Backward { kTranspose, kNone, kOnly };
  Backward backward = Backward::kTranspose;
  /// A routed collective (the MoE's ragged all-to-all): what balanced routing would move per device,
  /// beside the measured `bytes_per_device`; -1 for every other collective.
  int64_t expected_bytes = -1;
  /// On a pipelined mesh: the stage whose devices ran it (for a send/recv the sending stage, and
  /// `to_stage` the receiving one; for a gradient sync the stage whose parameters it sums); -1 without a
  /// pipeline.
  int64_t stage = -1, to_stage = -1;
  /// A training step's gradient sync (kernels/step_records.h): once per step, after the last
  /// microbatch's backward, not per microbatch. Its `backward` is kOnly: nothing moves in the forward.
  bool gradient_sync = false;
};

struct CommLog {
  std::vector<CommRecord> records;
  int64_t dropped_all_reduces = 0;  ///< by the kDropAllReduce injection
  int64_t dropped_sends = 0;        ///< by the kDropStageSend injection
  /// Total bytes per device of one kind in the forward pass (all scopes when scope is empty).
  int64_t Bytes(CollectiveKind kind, std::string_view scope = {}) const;
  /// The same with a routed collective's bytes under balanced routing (CommRecord::expected_bytes): what
  /// the step model prices, where Bytes is what this run's routing moved.
  int64_t ExpectedBytes(CollectiveKind kind, std::string_view scope = {}) const;
  /// Scopes in first-use order.
  std::vector<std::string> Scopes() const;
};

/// The record of a pipeline stage boundary's send/recv (Collectives::SendToStage, and the dry run's
/// boundaries): each device of stage `to` receives its counterpart's block of a [shape] tensor laid out
/// by `spec` on `stage`, the stage's mesh.
CommRecord StageSendRecord(const Dims& shape, const DistSpec& spec, const MeshGeometry& stage, int pp_axis,
                           int64_t from, int64_t to, std::string scope, std::string why, int64_t bytes_per_element);

/// Deliberate faults for the mutation tests; the default (kNone) is the only production path.
/// kDropStageSend: the first pipeline stage boundary's send does not arrive (the next stage starts from
/// zeros).
enum class Injection { kNone, kCorruptShard, kOffsetBlock, kDropAllReduce, kWrongDim, kSwapTupleOrder, kDropStageSend };
std::string_view InjectionName(Injection injection);                 // "none", "corrupt-shard", ...
std::optional<Injection> ParseInjectionName(std::string_view text);  // the inverse; nullopt otherwise

class Collectives {
 public:
  /// In this process: `geo` must be whole.
  Collectives(const MeshGeometry& geo, int64_t bytes_per_element, CommLog* log, Injection injection);
  /// Through `transport` (which must outlive this).
  Collectives(Transport& transport, int64_t bytes_per_element, CommLog* log, Injection injection);

  const MeshGeometry& geo() const { return geo_; }
  void SetScope(std::string scope) { scope_ = std::move(scope); }
  const std::string& scope() const { return scope_; }
  /// The pipeline stage these collectives run on (CommRecord::stage); -1 without a pipeline.
  void SetStage(int64_t stage) { stage_ = stage; }

  /// Gathers dim `dim` over all axes of its entry: the entry becomes None.
  DistTensor AllGather(DistTensor t, int dim, const std::string& why);
  /// Sums (or maxes) over the partial axes `axes` (for kMax: over `axes`, the tensor not partial).
  DistTensor AllReduce(DistTensor t, const std::vector<int>& axes, ReduceOp op, const std::string& why);
  /// Sums over the partial axes `axes` and leaves each device its block of `dim` (axes appended to the
  /// dim's entry, minor).
  DistTensor ReduceScatter(DistTensor t, const std::vector<int>& axes, int dim, const std::string& why);
  /// Moves the whole entry of `from` to the minor end of `to`'s entry.
  DistTensor AllToAll(DistTensor t, int from, int to, const std::string& why);
  /// EasyDeL's ragged all-to-all of expert outputs (easydel/layers/moe/_moe_module.py, the fused path's
  /// jax.lax.ragged_all_to_all): every member of a group over `axes` sends the rows it computed to every
  /// other, which rebuilds the group's whole row buffer. `t` holds each device's rows in place (zero
  /// where another member computed the row) and is partial over `axes`; the rows' union is their sum,
  /// exactly. `received_rows[i]` is how many rows local device i receives, `expected_rows` what balanced
  /// routing gives, `row_elements` the elements of one row.
  DistTensor RaggedAllToAll(DistTensor t, const std::vector<int>& axes, const std::vector<int64_t>& received_rows,
                            int64_t expected_rows, int64_t row_elements, const std::string& why);
  /// A pipeline stage boundary (kernels/pipeline_forward.h), on the whole mesh's collectives: `t` is a
  /// tensor of stage `from` (kernels/stage_mesh.h: on the stage's mesh, this process's blocks of it, none
  /// when it runs none of the stage's devices), and each device of stage `to` receives the block of the
  /// device of `from` with the same other coordinates. Returns the tensor on stage `to` (this process's
  /// blocks), in the same layout. Recorded as a send/recv of one block per device. REQUIRES: t.spec is
  /// what every process can tell without running `from` (ConstrainedSpec of kernels/spmd.h), no partial.
  DistTensor SendToStage(DistTensor t, int pp_axis, int64_t from, int64_t to, const std::string& why);
  /// Records a collective of the backward pass only: an all-reduce over `axes` of `block` elements per
  /// device (a shard_map's input gradient, summed over the axes its input is replicated on).
  void BackwardAllReduce(const DistTensor& t, const std::vector<int>& axes, int64_t block, const std::string& why);
  /// The log collectives are recorded in (nullptr when none).
  CommLog* log() const { return log_; }
  /// What a collective moves per element (the activation dtype).
  int64_t bytes_per_element() const { return bytes_per_element_; }

 private:
  /// Records the collective; `block` is the per-device block S in elements, moved as a ring moves it.
  void Record(CollectiveKind kind, const std::string& why, const DistTensor& t, const std::vector<int>& axes,
              int64_t group, int64_t block);
  /// Records the collective as moving `bytes` per device (what it moved, not a ring's share of a block).
  void RecordBytes(CollectiveKind kind, const std::string& why, const DistTensor& t, const std::vector<int>& axes,
                   int64_t group, int64_t bytes);
  /// "all-gather over (tp) in layer 0: why", for the transport's messages.
  std::string Describe(CollectiveKind kind, const std::vector<int>& axes, const std::string& why) const;
  /// `t` is a dry run's single block standing for every device (kernels/dry_run.h): its collectives
  /// change the block's shape and move nothing.
  bool Uniform(const DistTensor& t) const;

  std::unique_ptr<Transport> owned_;
  Transport& transport_;
  const MeshGeometry& geo_;
  int64_t bytes_per_element_;
  CommLog* log_;
  Injection injection_;
  std::string scope_;
  int64_t stage_ = -1;
};

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_COLLECTIVES_H_
