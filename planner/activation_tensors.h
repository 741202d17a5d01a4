#ifndef EASYPLAN_PLANNER_ACTIVATION_TENSORS_H_
#define EASYPLAN_PLANNER_ACTIVATION_TENSORS_H_

// Activations laid on a mesh, the second and third of the layers planner/activations.h describes:
// eformer's shape correction of a raw spec against a tensor (planner/layout.h CorrectSpec, --uneven
// replicate), the shards and bytes that follow, and findings where a dim is not divisible by its axes,
// aggregated over the tensors that share them as `validate` reports them.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/mesh.h"
#include "core/partition_spec.h"
#include "core/shape.h"
#include "core/status.h"
#include "planner/findings.h"
#include "planner/layout.h"
#include "planner/runtime_modes.h"

namespace easyplan::planner {

/// One activation laid on the mesh.
struct ActivationTensor {
  std::string name;  ///< "attention.query", "hidden_state", "kv_cache.key", ...
  Shape shape;
  DType dtype = DType::kBFloat16;
  PartitionSpec spec;       ///< raw, as EasyDeL resolves it
  PartitionSpec effective;  ///< as applied to this shape
  Shape shard_shape;
  int64_t bytes = 0;             ///< global bytes of one tensor
  int64_t bytes_per_device = 0;  ///< of the largest shard
  int64_t layers = 0;            ///< KV cache rows: how many layers hold this tensor (0 otherwise)
  int64_t window = 0;            ///< KV cache rows of sliding layers: the window
};

/// The product of the mesh sizes of `entry`'s axes. An axis the mesh lacks counts 1; the first one is
/// stored in `*unknown` when that is given and still empty.
int64_t AxisProduct(const PartitionSpec::Entry& entry, const Mesh& mesh, std::string* unknown);

/// `entry`'s axes with their sizes, for messages: "tp=4", or "fsdp=2 x sp=2 = 4".
std::string EntryAxesText(const PartitionSpec::Entry& entry, const Mesh& mesh);

/// Lays the activations of one plan on its mesh and collects their findings. `what` names the rule
/// that dropped an entry in a finding ("eformer's correction", "the cache sanitiser").
class ActivationBuilder {
 public:
  /// `mode` labels the findings ("decode attention.query [1, 1, 32, 128]: ..."). `mesh` must outlive
  /// the builder.
  ActivationBuilder(const Mesh& mesh, Mode mode) : mesh_(mesh), mode_(mode) {}

  const Mesh& mesh() const { return mesh_; }

  /// One tensor of the plan: the effective spec (eformer's correction), its shards, and findings for
  /// the entries the correction drops. Errors: a size that overflows int64.
  StatusOr<ActivationTensor> Lay(const std::string& name, Shape shape, DType dtype, const PartitionSpec& spec,
                                 const std::string& what);

  /// Fills `tensor`'s shard shape and bytes from its shape and effective spec.
  Status Measure(ActivationTensor& tensor) const;

  /// A finding, aggregated by FindingList's key.
  void Add(Finding finding, int dim = -1, std::string_view axis = {}) { findings_.Add(std::move(finding), dim, axis); }

  /// An uneven or unknown-axis finding, aggregated by `key`: the first tensor is named, the others counted.
  void AddUneven(Finding finding, const std::string& key);

  /// Every finding, the uneven ones after the others were added, sorted as FindingList::Take sorts.
  std::vector<Finding> Take();

 private:
  void Report(const std::string& name, const Shape& shape, const PartitionSpec& spec, const SpecIssue& issue,
              const std::string& what);

  const Mesh& mesh_;
  Mode mode_;
  FindingList findings_;
  // Uneven entries aggregate over tensors by (dim, axes, dim size): a batch of 1 over fsdp is one
  // finding naming the first tensor and counting the others.
  std::vector<Finding> uneven_;
  std::map<std::string, size_t> uneven_index_;
};

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_ACTIVATION_TENSORS_H_
