#include "planner/mesh_builder.h"

#include <gtest/gtest.h>

namespace easyplan::planner {
namespace {

using Sizes = std::vector<int64_t>;

AxisSizes ParseAxisFlag(std::string_view text, std::string_view flag = "--mesh") {
  StatusOr<AxisSizes> parsed = ParseAxisSizes(text, flag);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : AxisSizes{};
}

std::string ParseError(std::string_view text, std::string_view flag = "--mesh", int max_axes = 16) {
  StatusOr<AxisSizes> parsed = ParseAxisSizes(text, flag, max_axes);
  return parsed.ok() ? "no error" : parsed.status().diag().message;
}

// Axes named a, b, c, ... with the given sizes.
AxisSizes Axes(const Sizes& sizes) {
  AxisSizes axes;
  for (size_t k = 0; k < sizes.size(); ++k) axes.names.push_back(std::string(1, static_cast<char>('a' + k)));
  axes.sizes = sizes;
  return axes;
}

MeshRequest Request(std::string_view ici, std::optional<int64_t> devices = std::nullopt,
                    std::optional<std::string_view> dcn = std::nullopt) {
  MeshRequest request{.ici = ParseAxisFlag(ici), .devices = devices};
  if (dcn) request.dcn = ParseAxisFlag(*dcn, "--dcn");
  return request;
}

Mesh Build(const MeshRequest& request) {
  StatusOr<Mesh> mesh = BuildMesh(request);
  EXPECT_TRUE(mesh.ok()) << mesh.status().ToString();
  return mesh.ok() ? *mesh : Mesh{};
}

Sizes Filled(const Sizes& sizes, int64_t devices) { return Build({.ici = Axes(sizes), .devices = devices}).shape; }

std::string BuildError(const MeshRequest& request, int64_t max_devices = int64_t{1} << 24) {
  StatusOr<Mesh> mesh = BuildMesh(request, max_devices);
  return mesh.ok() ? "no error" : mesh.status().diag().message;
}

// ---- ParseAxisSizes ----

TEST(ParseAxisSizesTest, KeepsTheOrderGiven) {
  AxisSizes axes = ParseAxisFlag("dp=1,fsdp=-1,ep=1,tp=8,sp=1");
  EXPECT_EQ(axes.names, (std::vector<std::string>{"dp", "fsdp", "ep", "tp", "sp"}));
  EXPECT_EQ(axes.sizes, (Sizes{1, -1, 1, 8, 1}));
}

TEST(ParseAxisSizesTest, ToleratesSpacesAroundItems) {
  AxisSizes axes = ParseAxisFlag(" dp = 2 , tp=4 ");
  EXPECT_EQ(axes.names, (std::vector<std::string>{"dp", "tp"}));
  EXPECT_EQ(axes.sizes, (Sizes{2, 4}));
}

TEST(ParseAxisSizesTest, EmptyListIsAnError) {
  EXPECT_EQ(ParseError(""), "--mesh is empty: expected NAME=SIZE,... such as dp=1,fsdp=-1,tp=8");
  EXPECT_EQ(ParseError("  ", "--dcn"), "--dcn is empty: expected NAME=SIZE,... such as dp=1,fsdp=-1,tp=8");
}

TEST(ParseAxisSizesTest, ItemWithoutEqualsIsAnError) {
  EXPECT_EQ(ParseError("dp=1,fsdp"), "--mesh 'dp=1,fsdp': 'fsdp' has no '=' (expected NAME=SIZE)");
}

TEST(ParseAxisSizesTest, EmptyItemOrNameIsAnError) {
  EXPECT_EQ(ParseError("dp=1,"), "--mesh 'dp=1,': axis 2 is empty");
  EXPECT_EQ(ParseError("dp=1,,tp=2"), "--mesh 'dp=1,,tp=2': axis 2 is empty");
  EXPECT_EQ(ParseError("=4"), "--mesh '=4': '=4' has no axis name");
}

TEST(ParseAxisSizesTest, SizeMustBeAnInteger) {
  EXPECT_EQ(ParseError("tp=x"), "--mesh 'tp=x': size 'x' of axis 'tp' is not an integer");
  EXPECT_EQ(ParseError("tp=1.5"), "--mesh 'tp=1.5': size '1.5' of axis 'tp' is not an integer");
  EXPECT_EQ(ParseError("tp="), "--mesh 'tp=': size '' of axis 'tp' is not an integer");
  EXPECT_EQ(ParseError("tp=4=4"), "--mesh 'tp=4=4': size '4=4' of axis 'tp' is not an integer");
}

TEST(ParseAxisSizesTest, SizeBeyondInt64IsAnError) {
  EXPECT_EQ(ParseError("tp=9223372036854775808"),
            "--mesh 'tp=9223372036854775808': size '9223372036854775808' of axis 'tp' does not fit in 64 bits");
  EXPECT_EQ(ParseAxisFlag("tp=9223372036854775807").sizes, (Sizes{INT64_MAX}));  // parses; BuildMesh limits it
}

TEST(ParseAxisSizesTest, ZeroAndBelowMinusOneAreErrors) {
  EXPECT_EQ(ParseError("dp=0"),
            "--mesh 'dp=0': axis 'dp' has size 0; sizes are >= 1, or -1 for the one axis that takes the remaining "
            "devices");
  EXPECT_EQ(ParseError("dp=-2", "--dcn"),
            "--dcn 'dp=-2': axis 'dp' has size -2; sizes are >= 1, or -1 for the one axis that takes the remaining "
            "devices");
}

TEST(ParseAxisSizesTest, RepeatedNameIsAnError) {
  EXPECT_EQ(ParseError("dp=1,tp=2,dp=4"), "--mesh 'dp=1,tp=2,dp=4': axis 'dp' is given twice");
}

TEST(ParseAxisSizesTest, TooManyAxesIsAnError) {
  EXPECT_EQ(ParseError("a=1,b=1,c=1", "--mesh", 2), "--mesh 'a=1,b=1,c=1': 3 axes, at most 2 are supported");
  std::string seventeen;
  for (int k = 0; k < 17; ++k) seventeen += (k ? ",a" : "a") + std::to_string(k) + "=1";
  EXPECT_EQ(ParseError(seventeen), "--mesh '" + seventeen + "': 17 axes, at most 16 are supported");
  EXPECT_EQ(ParseError(seventeen.substr(0, seventeen.rfind(','))), "no error");
}

// ---- BuildMesh: the -1 fill, MaxText fill_unspecified_mesh_axes vectors (src/MaxText/max_utils.py) ----

TEST(BuildMeshTest, FillsTheMinusOneFromDevices) {
  EXPECT_EQ(Filled({2, -1, 5}, 20), (Sizes{2, 2, 5}));
  EXPECT_EQ(Filled({2, -1}, 2), (Sizes{2, 1}));
  EXPECT_EQ(Filled({1, -1, 1, 2, 1}, 8), (Sizes{1, 4, 1, 2, 1}));
}

TEST(BuildMeshTest, FillsLikeNumpyReshape) {  // eformer/escale/mesh/creation.py, EasyLM
  EXPECT_EQ(Filled({1, -1, 1, 1, 1}, 8), (Sizes{1, 8, 1, 1, 1}));
  EXPECT_EQ(Filled({2, -1, 1, 2, 1}, 8), (Sizes{2, 2, 1, 2, 1}));
  EXPECT_EQ(BuildError({.ici = Axes({1, 3, -1, 1, 1}), .devices = 8}),
            "--devices 8 is not divisible by the product of the other axes 3");
}

TEST(BuildMeshTest, MaxTextBaseDefaultsFillFsdp) {
  Mesh mesh =
      Build(Request("data=1,stage=1,fsdp=-1,fsdp_transpose=1,sequence=1,context=1,context_autoregressive=1,tensor=1,"
                    "tensor_transpose=1,tensor_sequence=1,expert=1,autoregressive=1",
                    16));
  EXPECT_EQ(mesh.shape, (Sizes{1, 1, 16, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_TRUE(mesh.dcn_shape.empty());
}

TEST(BuildMeshTest, MinusOneThatDoesNotDivideIsAnError) {
  EXPECT_EQ(BuildError({.ici = Axes({2, -1, 3}), .devices = 10}),
            "--devices 10 is not divisible by the product of the other axes 6");
  EXPECT_EQ(BuildError({.ici = Axes({4, -1}), .devices = 2}),  // MaxText: determined 0.5
            "--devices 2 is not divisible by the product of the other axes 4");
  EXPECT_EQ(BuildError(Request("dp=1,fsdp=-1,tp=8", 12)),
            "--devices 12 is not divisible by the product of the other axes 8");
  EXPECT_EQ(BuildError({.ici = Axes({3, -1}), .devices = 8}),
            "--devices 8 is not divisible by the product of the other axes 3");
}

TEST(BuildMeshTest, TwoMinusOnesAreAnError) {
  EXPECT_EQ(BuildError({.ici = Axes({-1, -1, 2}), .devices = 8}), "two axes are -1 (a, b): at most one can be filled");
  EXPECT_EQ(BuildError(Request("dp=1,fsdp=-1,tp=-1,sp=-1", 8)),
            "three axes are -1 (fsdp, tp, sp): at most one can be filled");
}

TEST(BuildMeshTest, MinusOneNeedsDevices) {
  EXPECT_EQ(BuildError(Request("dp=1,fsdp=-1,tp=8")),
            "--mesh fsdp=-1 needs --devices to know how many devices to fill in");
  EXPECT_EQ(BuildError(Request("dp=1,fsdp=4", std::nullopt, "dp=-1")),
            "--dcn dp=-1 needs --devices to know how many devices to fill in");
}

TEST(BuildMeshTest, DeviceCountMustMatchTheProduct) {
  EXPECT_EQ(BuildError({.ici = Axes({2, 2, 2}), .devices = 4}),
            "the mesh has 8 devices (a=2 x b=2 x c=2) but --devices says 4");
  EXPECT_EQ(BuildError(Request("dp=2,fsdp=8", 8)), "the mesh has 16 devices (dp=2 x fsdp=8) but --devices says 8");
  EXPECT_EQ(Build(Request("dp=2,fsdp=8", 16)).shape, (Sizes{2, 8}));
  EXPECT_EQ(Build(Request("dp=2,fsdp=8")).shape, (Sizes{2, 8}));  // no --devices: nothing to check against
}

TEST(BuildMeshTest, DevicesMustBePositive) {
  EXPECT_EQ(BuildError(Request("dp=-1", 0)), "--devices 0: expected a device count >= 1");
  EXPECT_EQ(BuildError(Request("dp=2", -3)), "--devices -3: expected a device count >= 1");
}

TEST(BuildMeshTest, DeviceCountAboveTheLimitIsAnError) {
  EXPECT_EQ(BuildError(Request("dp=4096,fsdp=8192")),
            "the mesh has 33554432 devices (dp=4096 x fsdp=8192), more than the limit of 16777216");
  EXPECT_EQ(BuildError(Request("dp=2,fsdp=-1", 64), 32),
            "the mesh has 64 devices (dp=2 x fsdp=32), more than the limit of 32");
  EXPECT_EQ(Build(Request("dp=4096,fsdp=4096")).NumDevices(), int64_t{1} << 24);
}

TEST(BuildMeshTest, OverflowIsAnErrorThatQuotesTheNumbers) {
  EXPECT_EQ(BuildError(Request("a=4294967296,b=4294967296"), INT64_MAX),
            "the mesh size overflows int64 (a=4294967296 x b=4294967296)");
  EXPECT_EQ(BuildError(Request("a=4294967296,b=4294967296,c=-1", 8)),
            "the product of the axis sizes overflows int64 (--mesh a=4294967296,b=4294967296,c=-1)");
  EXPECT_EQ(BuildError(Request("a=9223372036854775807", std::nullopt, "a=2"), INT64_MAX),
            "axis 'a' of 2 x 9223372036854775807 overflows int64");
  EXPECT_EQ(BuildError(Request("a=4294967296,b=2", std::nullopt, "b=4294967296"), INT64_MAX),
            "the mesh size overflows int64 (a=4294967296 x b=4294967296x2)");
}

TEST(BuildMeshTest, RequestsBuiltInCodeAreValidated) {
  EXPECT_EQ(BuildError({.ici = AxisSizes{}}), "--mesh names no axes");
  EXPECT_EQ(BuildError({.ici = AxisSizes{.names = {"dp", "dp"}, .sizes = {1, 2}}}), "--mesh: axis 'dp' is given twice");
  EXPECT_EQ(BuildError({.ici = AxisSizes{.names = {"dp"}, .sizes = {0}}}),
            "--mesh: axis 'dp' has size 0; sizes are >= 1, or -1 for the one axis that takes the remaining devices");
  EXPECT_EQ(BuildError({.ici = AxisSizes{.names = {""}, .sizes = {1}}}), "--mesh: axis 0 has no name");
  StatusOr<Mesh> mismatched = BuildMesh({.ici = AxisSizes{.names = {"dp"}, .sizes = {1, 2}}});
  ASSERT_FALSE(mismatched.ok());
  EXPECT_EQ(mismatched.status().kind(), ErrorKind::kInternal);
}

// ---- BuildMesh: hybrid (DCN) meshes, jax/_src/mesh_utils.py create_hybrid_device_mesh ----

TEST(BuildMeshTest, HybridShapeIsIciTimesDcn) {  // COPIED jax test_create_hybrid_device_mesh
  Mesh mesh = Build(Request("dp=1,fsdp=16,tp=4", std::nullopt, "dp=2"));
  EXPECT_EQ(mesh.axis_names, (std::vector<std::string>{"dp", "fsdp", "tp"}));
  EXPECT_EQ(mesh.shape, (Sizes{2, 16, 4}));
  EXPECT_EQ(mesh.dcn_shape, (Sizes{2, 1, 1}));

  Mesh middle = Build(Request("dp=1,fsdp=4,tp=16", std::nullopt, "fsdp=2"));
  EXPECT_EQ(middle.shape, (Sizes{1, 8, 16}));
  EXPECT_EQ(middle.dcn_shape, (Sizes{1, 2, 1}));
}

TEST(BuildMeshTest, HybridDeviceIdsAreDcnMajorPositions) {  // DERIVED from np.block in create_hybrid_device_mesh
  Mesh mesh = Build(Request("dp=1,fsdp=4,ep=1,tp=2,sp=1", 16, "dp=2"));
  ASSERT_EQ(mesh.shape, (Sizes{2, 4, 1, 2, 1}));
  for (int64_t d = 0; d < 2; ++d) {
    for (int64_t f = 0; f < 4; ++f) {
      for (int64_t t = 0; t < 2; ++t) {
        const int64_t device = 8 * d + 2 * f + t;  // slice * 8 + local id
        EXPECT_EQ(mesh.Coordinates(device), (Sizes{d, f, 0, t, 0}));
        EXPECT_EQ(mesh.SliceIndex(device), d);
      }
    }
  }
}

TEST(BuildMeshTest, SliceIndexFollowsDcnOnAMiddleAxis) {
  Mesh mesh = Build(Request("dp=1,fsdp=4,tp=16", std::nullopt, "fsdp=2"));
  for (int64_t device = 0; device < mesh.NumDevices(); ++device) {
    EXPECT_EQ(mesh.SliceIndex(device), mesh.Coordinates(device)[1] / 4) << device;
  }
}

TEST(BuildMeshTest, IciMinusOneFillsSoIciTimesDcnIsTheDeviceCount) {
  Mesh mesh = Build(Request("dp=1,fsdp=-1,tp=4", 64, "dp=2"));
  EXPECT_EQ(mesh.shape, (Sizes{2, 8, 4}));
  EXPECT_EQ(mesh.dcn_shape, (Sizes{2, 1, 1}));
  EXPECT_EQ(BuildError(Request("dp=1,fsdp=-1,tp=4", 12, "dp=2")),
            "--devices 12 is not divisible by the product of the other axes 8");
}

TEST(BuildMeshTest, DcnMinusOneFillsTheSliceCount) {
  Mesh mesh = Build(Request("dp=1,fsdp=4", 16, "dp=-1"));  // MaxText [-1] for 4 slices
  EXPECT_EQ(mesh.shape, (Sizes{4, 4}));
  EXPECT_EQ(mesh.dcn_shape, (Sizes{4, 1}));
  EXPECT_EQ(mesh.SliceIndex(15), 3);
}

TEST(BuildMeshTest, DcnProductMustMatchTheSliceCount) {
  // MaxText "Number of slices 4 does not match the product of the DCN parallelism 2": 4 slices of 4.
  EXPECT_EQ(BuildError(Request("dp=1,fsdp=4", 16, "dp=2,fsdp=1")),
            "the mesh has 8 devices (dp=2 x fsdp=4) but --devices says 16");
}

TEST(BuildMeshTest, DcnAxisMustBeInTheMesh) {
  EXPECT_EQ(BuildError(Request("dp=1,fsdp=-1,ep=1,tp=8,sp=1", 16, "xp=2")),
            "--dcn names axis 'xp' that is not in the mesh (dp, fsdp, ep, tp, sp)");
}

TEST(BuildMeshTest, DcnMinusOnesAreLimitedToOne) {
  EXPECT_EQ(BuildError(Request("dp=1,fsdp=4", 16, "dp=-1,fsdp=-1")),
            "two --dcn axes are -1 (dp, fsdp): at most one can be filled");
  EXPECT_EQ(BuildError(Request("dp=1,fsdp=-1", 16, "dp=-1")),
            "--mesh fsdp=-1 and --dcn dp=-1 are both -1: at most one can be filled");
}

TEST(BuildMeshTest, DcnListIsValidated) {
  EXPECT_EQ(BuildError({.ici = Axes({2}), .dcn = AxisSizes{.names = {"a", "a"}, .sizes = {1, 1}}}),
            "--dcn: axis 'a' is given twice");
  EXPECT_EQ(BuildError({.ici = Axes({2}), .dcn = AxisSizes{}}), "--dcn names no axes");
}

TEST(BuildMeshTest, DcnOfOnesIsASingleSlice) {
  Mesh mesh = Build(Request("dp=2,tp=2", 4, "dp=1"));
  EXPECT_EQ(mesh.shape, (Sizes{2, 2}));
  EXPECT_EQ(mesh.dcn_shape, (Sizes{1, 1}));
  EXPECT_EQ(mesh.SliceIndex(3), 0);
}

}  // namespace
}  // namespace easyplan::planner
