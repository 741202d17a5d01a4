#ifndef EASYPLAN_PLANNER_LAYOUT_TEST_UTIL_H_
#define EASYPLAN_PLANNER_LAYOUT_TEST_UTIL_H_

// The fixture of the planner's layout tests (layout_test, export_dtensor_test, export_hlo_test: each
// checks which slice of a tensor a device holds under a spec): the spec and mesh builders of
// planner/spec_test_util.h under the short names JAX's tests write them with, and a layout made as a
// test expectation. Header only; no library code includes it.

#include <gtest/gtest.h>

#include "core/mesh.h"
#include "core/partition_spec.h"
#include "core/shape.h"
#include "planner/layout.h"
#include "planner/spec_test_util.h"

namespace easyplan::planner {

using plan_testing::kNone;
using plan_testing::MakeMesh;
using plan_testing::P;

/// The layout of `spec` over `mesh` for a tensor of `shape`. A layout that cannot be made fails the test
/// and stands in as the replicated layout of a scalar, so the test runs on to its other expectations.
inline TensorLayout MakeLayout(const Shape& shape, const PartitionSpec& spec, const Mesh& mesh,
                               UnevenMode mode = UnevenMode::kError) {
  StatusOr<TensorLayout> layout = TensorLayout::Make(shape, spec, mesh, mode);
  EXPECT_TRUE(layout.ok()) << layout.status().ToString();
  return layout.ok() ? *layout : *TensorLayout::Make(Shape{}, P(), MakeMesh({{"x", 1}}), mode);
}

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_LAYOUT_TEST_UTIL_H_
