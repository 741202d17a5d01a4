#include "planner/export_jax.h"

#include <gtest/gtest.h>

#include "core/emit.h"

namespace easyplan::planner {
namespace {

using Entry = PartitionSpec::Entry;
const Entry kNone = {};

Mesh TestMesh() {
  Mesh mesh;
  mesh.axis_names = {"fsdp", "tp"};
  mesh.shape = {2, 2};
  return mesh;
}

TEST(ExportJaxTest, PythonLiterals) {
  EXPECT_EQ(PythonString(R"(self_attn/(q|k)_proj/kernel\d)"), R"("self_attn/(q|k)_proj/kernel\\d")");
  EXPECT_EQ(PythonString("a\"b\n"), R"("a\"b\n")");
  EXPECT_EQ(PythonPartitionSpec(PartitionSpec()), "PartitionSpec()");
  EXPECT_EQ(PythonPartitionSpec(PartitionSpec({kNone})), "PartitionSpec(None)");
  EXPECT_EQ(PythonPartitionSpec(PartitionSpec({{"tp"}, {"fsdp", "sp"}})), R"(PartitionSpec("tp", ("fsdp", "sp")))");
}

TEST(ExportJaxTest, ModuleIsDataOnly) {
  const std::string text = JaxModuleText(
      TestMesh(), {{"embed/embedding", PartitionSpec({{"tp"}, {"fsdp"}})}, {".*", PartitionSpec({kNone})}},
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

// sharding-formats.md §6.2: MaxText's named_shardings.json leaf shape.
TEST(ExportJaxTest, MaxTextGoldenDumpShape) {
  const Json json = JaxShardingsJson(
      TestMesh(), {{"a", {8, 4}, PartitionSpec({{"tp"}, {"fsdp", "tp"}})}, {"b", {}, PartitionSpec()}});
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

}  // namespace
}  // namespace easyplan::planner
