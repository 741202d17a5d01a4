#ifndef EASYPLAN_PLANNER_REDUNDANT_COMPUTE_H_
#define EASYPLAN_PLANNER_REDUNDANT_COMPUTE_H_

// The redundant-compute finding: a mesh axis of size > 1 that shards neither the batch nor the
// sequence (the config's partition_axis batch_axis and sequence_axis) nor any weight of a layer's
// module computes that module identically on each of its devices. Qwen3-235B on ep=64 with dp = fsdp
// = 1: attention is repeated 64 times. EasyDeL's expert mesh folds ep into the experts only.
//
// It sees every tensor of a plan (LayOutPlan adds each one), so the per-tensor step is kept cheap:
// what a tensor's shape and spec say is classified once per tensor kind (Classify), and Add only
// finds the module and layer in the name, without copying it. Only the "candidate" axes can be
// reported (size > 1, neither batch nor sequence), at most 62 of them (their sizes multiply to the
// device count, an int64), so the axes a module is split over are one 64-bit mask; a module split
// over every candidate, or holding per-expert tensors, can never be reported and records no layers.

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/flat_string_map.h"
#include "core/json.h"
#include "core/mesh.h"
#include "core/partition_spec.h"
#include "core/shape.h"
#include "planner/findings.h"

namespace easyplan::planner {

class RedundantComputeCheck {
 public:
  /// What Add needs of one tensor besides its name; the same for every tensor of a kind.
  struct Weight {
    bool counts = false;      ///< a weight (rank >= 2) and the mesh has some candidate axis
    bool per_expert = false;  ///< see Add
    uint64_t axes = 0;        ///< bit k: the spec uses candidate axis k
  };

  RedundantComputeCheck(const Mesh& mesh, const Json& config);

  /// The Weight of a tensor of this shape and effective spec. `per_expert`: one expert of a stacked
  /// set, placed on the devices of its slice of the expert dim, so its module is split (the HF
  /// layout's experts.N tensors).
  Weight Classify(const Shape& shape, const PartitionSpec& effective, bool per_expert = false) const;

  /// One planned tensor: its name (EasyDeL "model/layers/3/self_attn/q_proj/kernel" or HF
  /// "model.layers.3.self_attn.q_proj.weight") and Classify's result for it. Only the weights of
  /// numbered layers count.
  void Add(std::string_view name, const Weight& weight);
  void Add(std::string_view name, const Shape& shape, const PartitionSpec& effective, bool per_expert = false) {
    Add(name, Classify(shape, effective, per_expert));
  }

  /// One warning per axis that leaves some module's computation whole, naming the modules.
  std::vector<Finding> Findings() const;

 private:
  struct Module {
    std::string name;
    uint64_t axes = 0;        ///< the candidate axes some weight of the module is split over
    bool per_expert = false;  ///< holds per-expert tensors: split over the expert axes
    /// The module's layers while it could still be reported, in order of arrival: a repeat of the
    /// last one is skipped, and the list is sorted and deduplicated whenever it doubles.
    std::vector<int64_t> layers;
    size_t compacted = 0;  ///< layers.size() after the last compaction
  };

  const Mesh& mesh_;
  std::set<std::string> data_axes_;  ///< the batch and sequence axes
  std::vector<int> candidates_;      ///< mesh axis index of each candidate axis, in mesh order
  uint64_t all_candidates_ = 0;      ///< the mask of every candidate axis
  std::vector<Module> modules_;      ///< in order of first appearance
  FlatStringMap<size_t> module_index_;
  size_t last_module_ = 0;  ///< the module of the last Add (modules_.size() before the first)
};

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_REDUNDANT_COMPUTE_H_
