#ifndef EASYPLAN_PLANNER_SPEC_TEST_UTIL_H_
#define EASYPLAN_PLANNER_SPEC_TEST_UTIL_H_

// Small builders for the planner's tests (header only; no library code includes it): PartitionSpecs
// and meshes written inline.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/mesh.h"
#include "core/partition_spec.h"

namespace easyplan::planner::plan_testing {

/// A spec entry that shards its dim over no axis (`None` in a JAX PartitionSpec).
inline const PartitionSpec::Entry kNone = {};

/// PartitionSpec(entries...), as JAX's `P(...)` reads.
inline PartitionSpec P(std::vector<PartitionSpec::Entry> entries = {}) { return PartitionSpec(std::move(entries)); }

/// A mesh of named axes, in order.
inline Mesh MakeMesh(const std::vector<std::pair<std::string, int64_t>>& axes) {
  Mesh mesh;
  for (const auto& [name, size] : axes) {
    mesh.axis_names.push_back(name);
    mesh.shape.push_back(size);
  }
  return mesh;
}

/// A mesh of `names` with `sizes`, in order.
inline Mesh MakeMesh(std::vector<std::string> names, std::vector<int64_t> sizes) {
  Mesh mesh;
  mesh.axis_names = std::move(names);
  mesh.shape = std::move(sizes);
  return mesh;
}

/// A mesh over EasyDeL's five axes.
inline Mesh FiveAxisMesh(int64_t dp, int64_t fsdp, int64_t ep, int64_t tp, int64_t sp) {
  return MakeMesh({{"dp", dp}, {"fsdp", fsdp}, {"ep", ep}, {"tp", tp}, {"sp", sp}});
}

}  // namespace easyplan::planner::plan_testing

#endif  // EASYPLAN_PLANNER_SPEC_TEST_UTIL_H_
