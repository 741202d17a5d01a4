#ifndef EASYPLAN_API_ASSUMPTIONS_H_
#define EASYPLAN_API_ASSUMPTIONS_H_

// The EasyDeL defaults that change a step's figures a lot, when the user did not choose them: text
// outputs say "assumed ..." once, with the --set that changes it (memory, cost).

#include <string>
#include <vector>

#include "api/model.h"

namespace easyplan::api {

struct StepAssumptionsOf {
  bool train = true;             ///< a training step, else serving
  bool priced = false;           ///< cost: the attention kernel's traffic counts too
  bool policy_searched = false;  ///< suggest tries every checkpoint policy: the config's is no assumption
  /// The tree the figures count: a template tree says how it holds a quantized checkpoint, and that its
  /// parameters are float32 when neither the config nor --dtype names a dtype.
  const TreeSpec* tree = nullptr;
};

/// How the figures count a quantized checkpoint's weights (FP8, MXFP4), or "" when the tree is not a
/// template of a quantized config: "the checkpoint's MXFP4 weights dequantized to the parameter dtype at
/// load, as EasyDeL loads them; --layout hf counts them as stored", or as stored in the HF layout.
std::string QuantizedWeights(const Model& model, const TreeSpec& tree);

/// "kvdtype float32 (EasyDeL's default): the KV cache takes twice bfloat16's memory; --set
/// kvdtype=bfloat16 changes it", ... for every such key the config holds by default.
std::vector<std::string> StepAssumptions(const Model& model, const StepAssumptionsOf& step);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_ASSUMPTIONS_H_
