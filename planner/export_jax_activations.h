#ifndef EASYPLAN_PLANNER_EXPORT_JAX_ACTIVATIONS_H_
#define EASYPLAN_PLANNER_EXPORT_JAX_ACTIVATIONS_H_

// The activation side of the JAX exports (export_jax.h): for every runtime mode, the raw specs
// EasyDeL resolves (planner/activations.h: attention fields, residual stream, logits and labels, the
// KV cache as stored) and, for a MoE config, the folded (dp, ep, tp) expert mesh.

#include "core/json.h"
#include "core/mesh.h"
#include "core/status.h"
#include "planner/activation_table.h"
#include "planner/export_jax.h"
#include "rules/presets.h"
#include "schemas/dim_keys.h"

namespace easyplan::planner {

/// BuildActivationPlan in train, prefill, decode and insert with what `easyplan activations` uses by
/// default: bthd layout, no qkv_mni, no softmax aux, no shapes, the kernel the config selects, and the
/// dtype of the config's torch_dtype (else bfloat16). `config` is the resolved config (its
/// text_config is used for multimodal families); `geometry` its family's geometry values
/// (schemas::ResolvedConfig::geometry) and `dim_keys` the keys its dims are read from
/// (schemas::ResolvedConfig::dim_keys).
StatusOr<JaxActivations> JaxActivationSpecs(const ActivationTable& table, const rules::Presets& presets,
                                            const Json& config, const Json& geometry,
                                            const schemas::DimKeysByObject& dim_keys, const Mesh& mesh);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPORT_JAX_ACTIVATIONS_H_
