#include "planner/export_jax.h"

#include <gtest/gtest.h>

#include "core/emit.h"
#include "planner/spec_test_util.h"

namespace easyplan::planner {
namespace {

using plan_testing::kNone;
using plan_testing::MakeMesh;

using Entry = PartitionSpec::Entry;

Mesh FsdpTpMesh() { return MakeMesh({{"fsdp", 2}, {"tp", 2}}); }

TEST(ExportJaxTest, PythonLiterals) {
  EXPECT_EQ(PythonString(R"(self_attn/(q|k)_proj/kernel\d)"), R"("self_attn/(q|k)_proj/kernel\\d")");
  EXPECT_EQ(PythonString("a\"b\n"), R"("a\"b\n")");
  EXPECT_EQ(PythonPartitionSpec(PartitionSpec()), "PartitionSpec()");
  EXPECT_EQ(PythonPartitionSpec(PartitionSpec({kNone})), "PartitionSpec(None)");
  EXPECT_EQ(PythonPartitionSpec(PartitionSpec({{"tp"}, {"fsdp", "sp"}})), R"(PartitionSpec("tp", ("fsdp", "sp")))");
}

TEST(ExportJaxTest, ModuleIsDataOnly) {
  const std::string text = JaxModuleText(
      FsdpTpMesh(), {{"embed/embedding", PartitionSpec({{"tp"}, {"fsdp"}})}, {".*", PartitionSpec({kNone})}},
      {{"model/embed/embedding", {8, 4}, PartitionSpec({{"tp"}, {"fsdp"}})},
       {"model/norm/kernel", {4}, PartitionSpec()},
       {"model/bias", {4}, PartitionSpec({kNone})}},
      {"header"});
  EXPECT_EQ(text,
            "# header\n"
            "from jax.sharding import PartitionSpec\n"
            "\n"
            "# jax.make_mesh(MESH_SHAPE, MESH_AXIS_NAMES); device d sits at position d of the row-major mesh.\n"
            "MESH_AXIS_NAMES = (\"fsdp\", \"tp\")\n"
            "MESH_SHAPE = (2, 2)\n"
            "\n"
            "# Ordered partition rules for eformer's match_partition_rules: re.search, first match wins,\n"
            "# scalars get PartitionSpec(). Specs are resolved to mesh axes under the config.\n"
            "PARTITION_RULES = (\n"
            "    (\"embed/embedding\", PartitionSpec(\"tp\", \"fsdp\")),\n"
            "    (\".*\", PartitionSpec(None)),\n"
            ")\n"
            "\n"
            "# The effective PartitionSpec of every parameter (after the correction for its shape).\n"
            "PARAM_SPECS = {\n"
            "    \"model/embed/embedding\": PartitionSpec(\"tp\", \"fsdp\"),\n"
            "    \"model/norm/kernel\": PartitionSpec(),\n"
            "    \"model/bias\": PartitionSpec(None),\n"
            "}\n");
}

// MaxText's named_shardings.json leaf shape (maxtext tests/utils/sharding_info/qwen3-0.6b/tpu7x-16/slice_1/
// rule_default/named_shardings.json).
TEST(ExportJaxTest, MaxTextGoldenDumpShape) {
  const Json json = JaxShardingsJson(
      FsdpTpMesh(), {{"a", {8, 4}, PartitionSpec({{"tp"}, {"fsdp", "tp"}})}, {"b", {}, PartitionSpec()}});
  EXPECT_EQ(EmitJson(json["b"]),
            "{\n"
            "  \"mesh\": {\n"
            "    \"axis_names\": [\n"
            "      \"fsdp\",\n"
            "      \"tp\"\n"
            "    ],\n"
            "    \"shape\": {\n"
            "      \"fsdp\": 2,\n"
            "      \"tp\": 2\n"
            "    }\n"
            "  },\n"
            "  \"partition_spec\": [],\n"
            "  \"shape\": []\n"
            "}\n");
  EXPECT_EQ(json["a"]["partition_spec"].dump(), R"(["tp",["fsdp","tp"]])");
  EXPECT_EQ(json["a"]["shape"].dump(), "[8,4]");
}

// Activation specs per mode and the MoE expert mesh ride along as data (docs/ACTIVATIONS.md).
TEST(ExportJaxTest, ActivationSpecsAndExpertMesh) {
  JaxActivations activations;
  activations.modes.push_back(
      {"decode", {{"attention.query", PartitionSpec({{"dp"}, kNone})}, {"logits", std::nullopt}}});
  activations.expert_mesh_shape = std::array<int64_t, 3>{1, 2, 2};
  activations.expert_mesh_axis_names = {"dp", "ep", "tp"};
  const std::string text = JaxModuleText(FsdpTpMesh(), {}, {}, {}, &activations);
  const std::string tail = text.substr(text.find("ACTIVATION_LAYOUT"));
  EXPECT_EQ(tail,
            "ACTIVATION_LAYOUT = \"bthd\"\n"
            "ACTIVATION_SPECS = {\n"
            "    \"decode\": {\n"
            "        \"attention.query\": PartitionSpec(\"dp\", None),\n"
            "        \"logits\": None,\n"
            "    },\n"
            "}\n"
            "\n"
            "# The (dp, ep, tp) expert mesh EasyDeL folds for MoE blocks: a row-major reshape of the devices,\n"
            "# jax.sharding.Mesh(np.asarray(devices).reshape(EXPERT_MESH_SHAPE), EXPERT_MESH_AXIS_NAMES).\n"
            "EXPERT_MESH_AXIS_NAMES = (\"dp\", \"ep\", \"tp\")\n"
            "EXPERT_MESH_SHAPE = (1, 2, 2)\n");
  const Json json = JaxShardingsJson(FsdpTpMesh(), {}, &activations);
  EXPECT_EQ(json["__activations__"]["modes"]["decode"]["attention.query"], Json::parse(R"(["dp", null])"));
  EXPECT_TRUE(json["__activations__"]["modes"]["decode"]["logits"].is_null());
  EXPECT_EQ(json["__activations__"]["expert_mesh"]["shape"], Json::parse("[1, 2, 2]"));
}

}  // namespace
}  // namespace easyplan::planner
