#ifndef EASYPLAN_PLANNER_REDUNDANT_COMPUTE_H_
#define EASYPLAN_PLANNER_REDUNDANT_COMPUTE_H_

// The redundant-compute finding: a mesh axis of size > 1 that shards neither the batch nor the
// sequence (the config's partition_axis batch_axis and sequence_axis) nor any weight of a layer's
// module computes that module identically on each of its devices. Qwen3-235B on ep=64 with dp = fsdp
// = 1: attention is repeated 64 times. EasyDeL's expert mesh folds ep into the experts only.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/mesh.h"
#include "core/partition_spec.h"
#include "core/shape.h"
#include "planner/findings.h"

namespace easyplan::planner {

class RedundantComputeCheck {
 public:
  RedundantComputeCheck(const Mesh& mesh, const Json& config);

  /// One planned tensor: its name (EasyDeL "model/layers/3/self_attn/q_proj/kernel" or HF
  /// "model.layers.3.self_attn.q_proj.weight"), shape and effective spec. Only the weights (rank >= 2)
  /// of numbered layers count. `per_expert`: one expert of a stacked set, placed on the devices of its
  /// slice of the expert dim, so its module is split (the HF layout's experts.N tensors).
  void Add(const std::string& name, const Shape& shape, const PartitionSpec& effective, bool per_expert = false);

  /// One warning per axis that leaves some module's computation whole, naming the modules.
  std::vector<Finding> Findings() const;

 private:
  struct Module {
    std::set<std::string> axes;  ///< the mesh axes some weight of the module is split over
    bool per_expert = false;     ///< holds per-expert tensors: split over the expert axes
    std::set<int64_t> layers;
  };
  const Mesh& mesh_;
  std::set<std::string> data_axes_;  ///< the batch and sequence axes
  std::map<std::string, Module> modules_;
};

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_REDUNDANT_COMPUTE_H_
