#ifndef EASYPLAN_KERNELS_DRY_RUN_H_
#define EASYPLAN_KERNELS_DRY_RUN_H_

// A dry run: the numeric check's forward pass (kernels/model.h, the same Spmd ops and the same
// collectives) on shape-only tensors (HostTensor::meta), so a full-size model on a full-size mesh
// costs no memory for its values. It yields exactly the collectives `check` would measure and every
// matmul each device computes, which the step-time model (step/step_time.h) prices.
//
// Layers that repeat are run once: the model runs with `layers_run` layers (every distinct leading
// layer plus one of the repeated kind) and the report says how many more times the last one repeats.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/param_tree.h"
#include "core/status.h"
#include "kernels/collectives.h"
#include "kernels/model.h"
#include "kernels/spmd.h"
#include "planner/pipeline.h"
#include "planner/plan.h"

namespace easyplan::kernels {

struct DryRunOptions {
  /// Run every layer instead of one of each kind (tests compare with the numeric check this way).
  bool all_layers = false;
  /// Hold every device's block. By default one block stands for all of them: with an even layout and
  /// no values every device holds the same shapes, so one block gives every device's collectives and
  /// FLOPs at the cost of one device, not of the mesh (suggest on 16,384 chips).
  bool per_device = false;
};

struct DryRunReport {
  int64_t devices = 0;
  int64_t layers = 0;          ///< the model's layers
  int64_t layers_run = 0;      ///< the layers executed ("layer 0" .. "layer layers_run-1")
  std::string repeated_scope;  ///< "layer K": the last layer run, which stands for every later one
  int64_t repeats = 0;         ///< layers - layers_run: extra copies of repeated_scope
  CommLog comm;                ///< the executed scopes' collectives
  MatmulLog matmuls;           ///< the executed scopes' matmuls
  /// Forward matmul FLOPs per device over the whole model (the repeats included).
  std::vector<int64_t> flops;
  /// Bytes per device of one collective kind over the whole model, one forward pass.
  int64_t Bytes(CollectiveKind kind) const;
  /// A pipeline stage's view (StageView): how many of the stage's layers each of its scopes stands for.
  std::map<std::string, int64_t> stage_weights;
  bool stage_view = false;
  /// How many times a record of `scope` counts in the whole model (1, or 1 + repeats), or in the stage.
  int64_t Weight(const std::string& scope) const {
    if (stage_view) {
      const auto it = stage_weights.find(scope);
      return it == stage_weights.end() ? 0 : it->second;
    }
    return scope == repeated_scope ? 1 + repeats : 1;
  }
};

/// The part of `run` pipeline stage `stage` of `split` executes: "embed" on the first stage, the stage's
/// layers (each run layer's scope weighted by how many of the stage's layers it stands for), "final" (the
/// norm, the head and the loss) on the last, and the stage's own step records (kernels/step_records.h):
/// the sends it makes and its gradient sync. Records of other scopes and stages are left out.
DryRunReport StageView(const DryRunReport& run, const planner::PipelineSplit& split, int64_t stage);

/// Runs `model`'s forward over `plan` (laid out on `tree`, EasyDeL names) without values. BadInput
/// for what the numeric check also rejects: an uneven parameter layout, a batch or sequence the
/// activation layout does not divide.
StatusOr<DryRunReport> DryRunForward(const ModelDesc& model, const planner::Plan& plan, const ParamTree& tree,
                                     const DryRunOptions& options = {});

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_DRY_RUN_H_
