#include "core/mesh.h"

#include <gtest/gtest.h>

namespace easyplan {
namespace {

TEST(MeshTest, ASlicesShapeIsEachAxisOverItsDcnFactor) {
  Mesh mesh;
  mesh.axis_names = {"dp", "fsdp", "tp"};
  mesh.shape = {4, 8, 2};
  EXPECT_EQ(mesh.SliceShape(), (std::vector<int64_t>{4, 8, 2}));
  EXPECT_EQ(mesh.SliceStrides(), (std::vector<int64_t>{16, 2, 1}));
  mesh.dcn_shape = {2, 1, 1};
  EXPECT_EQ(mesh.SliceShape(), (std::vector<int64_t>{2, 8, 2}));
  EXPECT_EQ(mesh.SliceStrides(), (std::vector<int64_t>{16, 2, 1}));
  mesh.dcn_shape = {1, 4, 1};
  EXPECT_EQ(mesh.SliceShape(), (std::vector<int64_t>{4, 2, 2}));
  EXPECT_EQ(mesh.SliceStrides(), (std::vector<int64_t>{4, 2, 1}));
}

}  // namespace
}  // namespace easyplan
