#ifndef EASYPLAN_KERNELS_NUMERIC_CHECK_PARTS_H_
#define EASYPLAN_KERNELS_NUMERIC_CHECK_PARTS_H_

// Internal to kernels: the parts of the numeric check (kernels/numeric_check.h) that its plain run
// (numeric_check.cc) and its pipelined run (pipeline_check.cc) share: pseudo-random numbers, the
// injected layout faults, each shard against its spec, the token ids, and the comparisons of outputs and
// of two engines' collectives.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/param_tree.h"
#include "core/status.h"
#include "kernels/collectives.h"
#include "kernels/model.h"
#include "kernels/numeric_check.h"
#include "planner/layout.h"
#include "planner/plan.h"

namespace easyplan::kernels::internal {

/// splitmix64's next value.
uint64_t SplitMix(uint64_t* state);
/// FNV-1a of `text`.
uint64_t Fnv1a(const std::string& text);
/// Uniform in [-1, 1).
double Uniform(uint64_t* state);
/// "[0, 3, 1]".
std::string IndexText(const Dims& index);

/// True when some dim of `spec` is cut into more than one block on `geo`'s mesh.
bool IsSharded(const DistSpec& spec, const MeshGeometry& geo);
/// The layout an injection (wrong-dim, swap-tuple-order) places a parameter of `spec` with instead of
/// the plan's; nullopt when it changes nothing.
std::optional<planner::TensorLayout> MutatedLayout(const Shape& shape, const PartitionSpec& spec, const Mesh& mesh,
                                                   Injection injection);

/// A collective's bytes as every engine agrees on them (a routed one's expectation, kernels/collectives.h).
int64_t ComparedBytes(const CommRecord& r);
/// A record as text for hashing: everything two engines must agree on.
std::string RecordKey(const CommRecord& r);
/// The hash of a log's records and injected drops.
int64_t HashOf(const CommLog& log);
/// "all-gather in layer 0 (...): P(...) over a group of 4, 96 bytes per device".
std::string RecordText(const CommRecord& r);
/// The collectives two engines compare: the log's records but the backward-only ones.
int64_t ForwardRecords(const CommLog& log);
/// The first difference between two engines' collectives ("" when none).
std::string FirstDifference(const CommLog& engine, const CommLog& in_process);

/// The normalized MSE and largest error of an output against its expected values, summed over every
/// device's block (so a replicated block weighs the same in both sums).
struct ErrorSum {
  double err2 = 0, ref2 = 0, max_abs = 0;
  /// Adds one element; returns |got - want|.
  double Add(double got, double want) {
    const double diff = std::abs(got - want);
    err2 += diff * diff;
    ref2 += want * want;
    max_abs = std::max(max_abs, diff);
    return diff;
  }
  double nmse() const { return ref2 > 0 ? err2 / ref2 : err2; }
};

/// One engine output against the in-process run's: every device's block of `got` against `want`'s,
/// into `c`'s worst absolute difference and NMSE; `scale` grows to the largest |want| (the tolerance's).
void AddEngineDifference(const DistTensor& want, const DistTensor& got, EngineComparison& c, double& scale);

/// The simulation's bounds: the device cap, then every device's shards plus the reference copy in f64
/// within max_bytes. Returns the parameters' bytes.
StatusOr<int64_t> CheckSimulationFits(const planner::Plan& plan, const NumericOptions& options);

/// BadInput unless `group` lays the parameter out evenly and without an expert layout: the check cuts
/// only even shards.
Status CheckEvenLayout(const TensorEntry& tensor, const planner::ParamPlan& p, const planner::LayoutGroup& group);

/// A parameter the numeric check places: its plan entry, tensor and layout group, its dims, and its
/// deterministic weight (MakeWeight of the check's seed).
struct CheckedParameter {
  const planner::ParamPlan& plan;
  const TensorEntry& tensor;
  const planner::LayoutGroup& group;
  Dims dims;
  HostTensor weight;
};

/// Calls `place` (returning Status) on every parameter of `plan` in order (buffers are not placed), each
/// laid out evenly (CheckEvenLayout) and counted in report->params: what the unpipelined and the
/// pipelined check both walk before placing a parameter their own way.
template <typename Place>
Status ForEachCheckedParameter(const planner::Plan& plan, const ParamTree& tree, uint64_t seed, NumericReport* report,
                               Place&& place) {
  for (const planner::ParamPlan& p : plan.params) {
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(p.tensor)];
    const planner::LayoutGroup& group = plan.groups[static_cast<size_t>(p.group)];
    if (tensor.role != TensorRole::kParameter) continue;
    EP_RETURN_IF_ERROR(CheckEvenLayout(tensor, p, group));
    Dims dims(tensor.shape.dims().begin(), tensor.shape.dims().end());
    HostTensor weight = MakeWeight(tensor.name, dims, seed);
    ++report->params;
    EP_RETURN_IF_ERROR(place(CheckedParameter{p, tensor, group, std::move(dims), std::move(weight)}));
  }
  return Status();
}

/// The offset-block fault: moves `box` one block along the first dim `spec` cuts on `geo`.
void OffsetBlock(const DistSpec& spec, const MeshGeometry& geo, std::vector<planner::Range>* box);

/// Whether the shard `box` has the extent of `want_box` in every dim (else the forward cannot run).
bool SameExtents(const std::vector<planner::Range>& box, const std::vector<Range>& want_box);

/// Counts a shard error into `report`, which keeps three messages a parameter (`param_errors`: those of
/// this parameter so far) and twenty in all.
void RecordShardError(ShardError error, int64_t* param_errors, NumericReport* report);

/// Device d's shard (`box`, holding `local`) against the slice the effective spec names (`want_box` of
/// the weight `w`): its extent on every process, its values on the root. The message is "" when it agrees.
ShardError CheckShard(const TensorEntry& tensor, const planner::ParamPlan& p, int64_t d,
                      const std::vector<planner::Range>& box, const std::vector<Range>& want_box, const HostTensor& w,
                      const HostTensor& local, bool root);

/// Token ids [batch, seq], pseudo-random under the seed.
HostTensor TokenIds(const ModelDesc& model, uint64_t seed);

/// A ParamLookup over `params` (which must outlive it): a name the map lacks is a bug.
ParamLookup LookupIn(const std::unordered_map<std::string, DistTensor>& params);

/// One output of the sharded run (`out`, blocks of `devices` devices of `geo`) against the unsharded
/// reference `want` (on `geo1`), device block by block. The tolerances are per op: the sharded run sums
/// in a different order, nothing else.
Comparison CompareOutput(const Activation& want, const DistTensor& out, const MeshGeometry& geo,
                         const MeshGeometry& geo1, int64_t devices);

}  // namespace easyplan::kernels::internal

#endif  // EASYPLAN_KERNELS_NUMERIC_CHECK_PARTS_H_
