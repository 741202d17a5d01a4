#include "planner/export_shardy.h"

#include <gtest/gtest.h>

#include <cctype>

#include "planner/spec_test_util.h"

namespace easyplan::planner {
namespace {

using plan_testing::kNone;
using plan_testing::MakeMesh;

using Entry = PartitionSpec::Entry;

// A recursive-descent parser for the mesh and tensor-sharding attribute bodies (shardy attrs.td
// grammar), so that tests can round-trip Shardy's own printed examples.
class Parser {
 public:
  explicit Parser(std::string text) : text_(std::move(text)) {}

  SdyMesh Mesh() {
    Expect("<");
    SdyMesh mesh = MeshBody();
    Expect(">");
    Done();
    return mesh;
  }

  SdyTensorSharding Sharding() {
    SdyTensorSharding sharding;
    Expect("<");
    if (Accept("@")) {
      sharding.mesh_name = Identifier();
    } else {
      Expect("mesh<");
      sharding.inline_mesh = MeshBody();
      Expect(">");
    }
    Expect(",");
    Expect("[");
    if (!Accept("]")) {
      do {
        sharding.dims.push_back(Dim());
      } while (Accept(","));
      Expect("]");
    }
    while (Accept(",")) {
      if (Accept("replicated=")) {
        sharding.replicated = AxisList();
      } else {
        Expect("unreduced=");
        if (Peek() != '{') sharding.unreduced_kind = Identifier();
        sharding.unreduced = AxisList();
      }
    }
    Expect(">");
    Done();
    return sharding;
  }

 private:
  SdyMesh MeshBody() {
    SdyMesh mesh;
    Expect("[");
    if (!Accept("]")) {
      do {
        std::string name = String();
        Expect("=");
        mesh.axes.emplace_back(name, Int());
      } while (Accept(","));
      Expect("]");
    }
    if (Accept(",")) {
      Expect("device_ids=[");
      do {
        mesh.device_ids.push_back(Int());
      } while (Accept(","));
      Expect("]");
    }
    return mesh;
  }

  SdyDimSharding Dim() {
    SdyDimSharding dim;
    Expect("{");
    if (!Accept("}")) {
      do {
        if (Accept("?")) {
          dim.open = true;
          break;
        }
        dim.axes.push_back(Axis());
      } while (Accept(","));
      Expect("}");
    }
    if (Accept("p")) dim.priority = Int();
    return dim;
  }

  std::vector<SdyAxisRef> AxisList() {
    std::vector<SdyAxisRef> axes;
    Expect("{");
    do {
      axes.push_back(Axis());
    } while (Accept(","));
    Expect("}");
    return axes;
  }

  SdyAxisRef Axis() {
    SdyAxisRef ref{String(), std::nullopt};
    if (Accept(":(")) {
      const int64_t pre = Int();
      Expect(")");
      ref.sub_axis = std::make_pair(pre, Int());
    }
    return ref;
  }

  void Skip() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  char Peek() {
    Skip();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool Accept(const std::string& token) {
    Skip();
    if (text_.compare(pos_, token.size(), token) != 0) return false;
    pos_ += token.size();
    return true;
  }
  void Expect(const std::string& token) {
    EXPECT_TRUE(Accept(token)) << "expected '" << token << "' at " << pos_ << " in " << text_;
  }
  void Done() {
    Skip();
    EXPECT_EQ(pos_, text_.size()) << "trailing text in " << text_;
  }
  std::string String() {
    Expect("\"");
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') out += text_[pos_++];
    Expect("\"");
    return out;
  }
  std::string Identifier() {
    Skip();
    std::string out;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      out += text_[pos_++];
    }
    return out;
  }
  int64_t Int() {
    Skip();
    size_t used = 0;
    const int64_t value = std::stoll(text_.substr(pos_), &used);
    pos_ += used;
    return value;
  }

  std::string text_;
  size_t pos_ = 0;
};

std::string RoundTripMesh(const std::string& text) { return SdyMeshAttrText(Parser(text).Mesh()); }
std::string RoundTripSharding(const std::string& text) { return SdyTensorShardingBody(Parser(text).Sharding()); }

// Copied from openxla/shardy shardy/dialect/sdy/ir/test/mesh_parse_print.mlir and
// tensor_sharding_parse_print.mlir.
TEST(ExportShardyTest, MeshParsePrintVectors) {
  EXPECT_EQ(RoundTripMesh(R"(<["a"=1], device_ids=[0]>)"), R"(<["a"=1]>)");
  EXPECT_EQ(RoundTripMesh(R"(<["a"=2, "b"=2], device_ids=[0, 1, 2, 3]>)"), R"(<["a"=2, "b"=2]>)");
  EXPECT_EQ(RoundTripMesh(R"(<["a"=2], device_ids=[1, 0]>)"), R"(<["a"=2], device_ids=[1, 0]>)");
  EXPECT_EQ(RoundTripMesh(R"(<["a"=2, "b"=4]>)"), R"(<["a"=2, "b"=4]>)");
  EXPECT_EQ(RoundTripMesh(R"(<[], device_ids=[0]>)"), R"(<[], device_ids=[0]>)");
  EXPECT_EQ(RoundTripMesh(R"(<[]>)"), R"(<[]>)");
}

TEST(ExportShardyTest, TensorShardingParsePrintVectors) {
  for (const std::string text : {
           R"(<@foo, [{"a", ?}, {?}]>)",
           R"(<@foo, [{"a", "b", ?}, {}]>)",
           R"(<@foo, [{"a"}, {"b":(2)2}]>)",
           R"(<@foo, [{}, {}], replicated={"a", "b"}>)",
           R"(<@foo, [{}, {}], unreduced=max{"a"}>)",
           R"(<@foo, [], replicated={"b"}>)",
           R"(<@foo, [{"a"}, {}], replicated={"a"}, unreduced={"b"}>)",
           R"(<mesh<["x"=2], device_ids=[1, 0]>, [{"x"}, {}]>)",
           R"(<@mesh, [{"x"}p0, {"y"}p1]>)",
       }) {
    EXPECT_EQ(RoundTripSharding(text), text);
  }
  // replicated and unreduced print in that order even when written reversed.
  EXPECT_EQ(RoundTripSharding(R"(<@foo, [{}, {}], unreduced={"b"}, replicated={"a"}>)"),
            R"(<@foo, [{}, {}], replicated={"a"}, unreduced={"b"}>)");
}

// What JAX gives for NamedShardings (jax/_src/named_sharding.py named_sharding_to_sdy_sharding).
TEST(ExportShardyTest, JaxNamedShardings) {
  // testShardingConstraintStablehlo: mesh x=2, y=1, P('x', 'y'): Shardy keeps the size-1 axis.
  EXPECT_EQ(SdyShardingAttr(PartitionSpec({{"x"}, {"y"}}), 2), R"(#sdy.sharding<@mesh, [{"x"}, {"y"}]>)");
  // Unannotated (replicated) rank-2 argument.
  EXPECT_EQ(SdyShardingAttr(PartitionSpec(), 2), R"(#sdy.sharding<@mesh, [{}, {}]>)");
  EXPECT_EQ(SdyShardingAttr(PartitionSpec({kNone}), 2), R"(#sdy.sharding<@mesh, [{}, {}]>)");
  EXPECT_EQ(SdyShardingAttr(PartitionSpec({{"fsdp", "sp"}, {"tp"}}), 2),
            R"(#sdy.sharding<@mesh, [{"fsdp", "sp"}, {"tp"}]>)");
  EXPECT_EQ(SdyShardingAttr(PartitionSpec(), 0), R"(#sdy.sharding<@mesh, []>)");
  EXPECT_EQ(SdyMeshDefinition(MakeMesh({{"x", 1}, {"y", 2}})), R"(sdy.mesh @mesh = <["x"=1, "y"=2]>)");
  // A printed attribute parses back to the same sharding.
  const std::string attr = SdyShardingAttr(PartitionSpec({{"sp", "fsdp"}, kNone, {"tp"}}), 3);
  const SdyTensorSharding parsed = Parser(attr.substr(std::string("#sdy.sharding").size())).Sharding();
  ASSERT_EQ(parsed.dims.size(), 3u);
  EXPECT_EQ(parsed.dims[0].axes, (std::vector<SdyAxisRef>{{"sp", std::nullopt}, {"fsdp", std::nullopt}}));
  EXPECT_TRUE(parsed.dims[1].axes.empty());
  EXPECT_EQ(parsed.mesh_name, "mesh");
}

}  // namespace
}  // namespace easyplan::planner
