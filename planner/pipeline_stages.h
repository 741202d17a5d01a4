#ifndef EASYPLAN_PLANNER_PIPELINE_STAGES_H_
#define EASYPLAN_PLANNER_PIPELINE_STAGES_H_

// Which pipeline stage holds each tensor of a tree (docs/PIPELINE.md): a decoder layer's tensors sit on
// the stage that runs the layer, the embeddings on the first stage, the final norm and the head on the
// last, and a tied embedding on both (it is the first stage's lookup and the last stage's head; Megatron-LM
// keeps a copy on each and all-reduces their gradients, megatron/core/models/common/language_module).

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/param_tree.h"
#include "planner/pipeline.h"
#include "planner/plan.h"

namespace easyplan::planner {

/// The decoder layer a tensor belongs to: the first segment of its name ('/' or '.' separated) made of
/// digits only ("model/layers/3/mlp/experts/7/w1" is layer 3; "model.layers.3..." too). nullopt for a
/// tensor outside the layers.
std::optional<int64_t> LayerIndexOf(std::string_view name);

/// What a tensor outside the layers is to the pipeline.
enum class OuterTensor : uint8_t {
  kLast,          ///< the final norm, the head, anything after the layers: the last stage
  kFirst,         ///< a token or position embedding: the first stage
  kFirstAndLast,  ///< the token embedding of tied embeddings: a copy on the first and on the last stage
};

/// Each tree tensor's stages under `split`. `outer[t]` says where tensor t goes when it is outside the
/// layers (one entry per tensor; layer tensors ignore theirs). Under DualPipe every tensor also lives on
/// the mirror stage p-1-s, whose reverse-direction chunk that device runs (DeepSeek-V3 report, 3.2.1).
std::vector<StagePlacement> PlaceOnStages(const ParamTree& tree, const PipelineSplit& split,
                                          const std::vector<OuterTensor>& outer);
/// The same with each tensor's LayerIndexOf given (-1 outside the layers), for callers that split one
/// tree many ways.
std::vector<StagePlacement> PlaceOnStages(const std::vector<int64_t>& layer_of, const PipelineSplit& split,
                                          const std::vector<OuterTensor>& outer);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_PIPELINE_STAGES_H_
