#ifndef EASYPLAN_SCHEMAS_TREE_BUILDER_H_
#define EASYPLAN_SCHEMAS_TREE_BUILDER_H_

#include <cstdint>
#include <optional>

#include "core/json.h"
#include "core/param_tree.h"
#include "core/status.h"
#include "schemas/tree_template.h"

namespace easyplan::schemas {

struct TreeOptions {
  Layout layout = Layout::kEasyDel;
  std::optional<DType> dtype;    ///< overrides the config's torch_dtype / dtype
  bool include_buffers = false;  ///< add the persistent buffers some checkpoints store (rotary inv_freq, ...)
  int64_t max_tensors = 10'000'000;
  /// The EasyDeL version the tree describes (schemas/easydel_versions.yaml), bound as `easydel_version` for
  /// the template's conditions (gpt-oss's experts are split at 090a03b2); "" leaves it null.
  std::string easydel_version;
};

/// One tensor of the expanded template, in both dialects, before layout selection. The EasyDeL side
/// of a per-expert tensor is the stacked tensor (`experts` > 0).
struct ExpandedTensor {
  std::string hf_name;  ///< with kExpertPlaceholder when experts > 0
  Shape hf_shape;       ///< one expert's shape when experts > 0
  std::string easydel_name;
  Shape easydel_shape;
  DType dtype = DType::kFloat32;
  TensorRole role = TensorRole::kParameter;
  int64_t experts = 0;
  bool in_hf = true;
  bool in_easydel = true;
  std::string module;  ///< the EasyDeL module kind owning it (TensorTemplate::module), "" when undeclared
  /// TensorTemplate::easydel_link as the HF name of the EasyDeL-only tensor it names; "" for none.
  std::string easydel_link;
  SourceLoc loc;  ///< the template entry
};

/// The parameter dtype of a resolved config: `torch_dtype`, else `dtype` (transformers v5), else
/// float32 (what transformers assumes when a config names none).
/// The quantization a checkpoint stores its weights in that the tree lists as stored:
/// quantization_config.quant_method "fp8" or "mxfp4" ("" for any other or none; docs/TREES.md).
std::string StoredQuantization(const Json& config);

StatusOr<DType> ParamDType(const Json& config, const std::optional<DType>& override_dtype);

/// Expands `tree` over a resolved config into the tensors of both layouts. Errors name the template
/// file:line and the tensor: a dim that is not a non-negative integer, an overflowing size, more than
/// `max_tensors` tensors.
StatusOr<std::vector<ExpandedTensor>> ExpandTreeTemplate(const TreeTemplate& tree, const Json& config,
                                                         const TreeOptions& options);

/// The tensors of one layout, in template order (per-expert tensors expanded in expert order).
StatusOr<ParamTree> BuildParamTree(const TreeTemplate& tree, const Json& config, const TreeOptions& options);

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_TREE_BUILDER_H_
