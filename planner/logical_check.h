#ifndef EASYPLAN_PLANNER_LOGICAL_CHECK_H_
#define EASYPLAN_PLANNER_LOGICAL_CHECK_H_

// The check users ask for most: a sharded dim whose logical count (attention heads, kv heads, experts,
// vocabulary) its mesh axes do not divide, with the sizes each axis could have instead.

#include <optional>
#include <string>
#include <string_view>

#include "core/json.h"
#include "core/mesh.h"
#include "core/partition_spec.h"
#include "core/shape.h"
#include "planner/findings.h"
#include "rules/logical_dims.h"

namespace easyplan::planner {

/// The axes that split a model's work by what a counting dim counts: the tensor-parallel and the
/// expert-parallel axes of the config's partition_axis (tensor_parallel_axis, expert_parallel_axis;
/// "tp" and "ep" by default). The data axes (dp, fsdp, sp) only store a weight in pieces, gathered
/// before use, so for them only the dim's size matters.
std::vector<std::string> ComputeAxes(const Json& config);

/// The spec whose counting dims CheckLogicalDim checks: per dim, the rule's `written` entry where the
/// uneven-dim correction kept it (`laid_out`), and where it dropped it, the entry's `compute_axes`. 32
/// heads on tp=6 cannot be dealt out whether or not the dim's size (heads x head_dim) divides, and
/// replicating the dim would leave tp doing nothing for attention; a vocabulary fsdp does not divide is
/// stored whole instead, which the uneven-dim warning reports.
PartitionSpec CountedSpec(const PartitionSpec& written, const PartitionSpec& laid_out,
                          const std::vector<std::string>& compute_axes);

/// `shape` is the tensor the rules see (`rule_name`); `spec` is the resolved spec before correction, of
/// the tensor itself, whose dim k is dim (*dim_of)[k] of `shape` when the rules are written for the other
/// layout (LayoutLink::dim_of: an HF tensor planned by EasyDeL rules), else the same dims.
/// Returns a kLogicalIndivisible finding naming `tensor_name` when the entry of a counting dim
/// has an axis product > 1 that does not divide the count; nullopt otherwise (also when the tensor has no
/// such dim: one expert's HF weight has no expert dim). `dim_out` receives the tensor's dim (for
/// aggregation).
std::optional<Finding> CheckLogicalDim(const rules::LogicalDims& dims, std::string_view rule_name,
                                       const std::string& tensor_name, const Shape& shape, const PartitionSpec& spec,
                                       const Mesh& mesh, const Json& config, int* dim_out,
                                       const std::vector<int>* dim_of = nullptr);

/// The divisors of `n` in increasing order ("valid sizes" for an axis that must divide n).
std::vector<int64_t> Divisors(int64_t n);

/// "1, 2, 4, 8": the valid sizes a note lists for an axis of size `asked` that must divide `n`. A long
/// list (a vocabulary of 151,936 has 16 divisors) keeps the `per_side` nearest below and above `asked`
/// and says how many there are, so the note stays one readable line.
std::string NearestDivisorsText(int64_t n, int64_t asked, size_t per_side = 3);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_LOGICAL_CHECK_H_
