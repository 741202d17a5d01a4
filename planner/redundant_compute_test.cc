#include "planner/redundant_compute.h"

#include <gtest/gtest.h>

namespace easyplan::planner {
namespace {

const Json kConfig = Json::parse(R"({"partition_axis": {"batch_axis": ["fsdp", "dp"], "sequence_axis": "sp"}})");

PartitionSpec Spec(std::vector<PartitionSpec::Entry> entries) { return PartitionSpec(std::move(entries)); }

TEST(RedundantComputeTest, AnAxisNoWeightOfAModuleUsesComputesItWhole) {
  const Mesh mesh{{"dp", "fsdp", "ep", "tp", "sp"}, {1, 1, 64, 1, 1}, {}};
  RedundantComputeCheck check(mesh, kConfig);
  for (int layer = 0; layer < 3; ++layer) {
    const std::string prefix = "model/layers/" + std::to_string(layer);
    check.Add(prefix + "/self_attn/q_proj/kernel", Shape{4096, 8192}, Spec({{"fsdp", "sp"}, {"tp"}}));
    check.Add(prefix + "/mlp/experts/gate_proj/kernel", Shape{128, 4096, 1536}, Spec({{"ep"}, {}, {"tp"}}));
    check.Add(prefix + "/input_layernorm/kernel", Shape{4096}, Spec({{}}));  // a vector: not a weight
  }
  const std::vector<Finding> findings = check.Findings();
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].code, FindingCode::kRedundantCompute);
  EXPECT_NE(findings[0].message.find("ep=64"), std::string::npos) << findings[0].message;
  EXPECT_NE(findings[0].message.find("self_attn (3 layers)"), std::string::npos) << findings[0].message;
  EXPECT_EQ(findings[0].message.find("mlp"), std::string::npos) << findings[0].message;
}

TEST(RedundantComputeTest, BatchAndSequenceAxesAndPerExpertTensorsAreNeverIdle) {
  const Mesh mesh{{"dp", "fsdp", "ep", "tp", "sp"}, {2, 4, 2, 1, 2}, {}};
  RedundantComputeCheck check(mesh, kConfig);
  check.Add("model.layers.0.self_attn.q_proj.weight", Shape{8192, 4096}, Spec({{"tp"}, {"fsdp", "sp"}}));
  check.Add("model.layers.0.mlp.experts.3.gate_proj.weight", Shape{1536, 4096}, Spec({{}, {}}), /*per_expert=*/true);
  // ep=2 leaves self_attn whole; dp, fsdp and sp shard the batch and the sequence.
  const std::vector<Finding> findings = check.Findings();
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("ep=2"), std::string::npos);
  EXPECT_NE(findings[0].message.find("self_attn (1 layer)"), std::string::npos) << findings[0].message;
}

TEST(RedundantComputeTest, AModuleSplitByALaterTensorIsNotIdle) {
  const Mesh mesh{{"dp", "fsdp", "ep", "tp", "sp"}, {1, 2, 1, 4, 1}, {}};
  RedundantComputeCheck check(mesh, kConfig);
  check.Add("model.layers.0.self_attn.q_norm.weight", Shape{128, 1}, Spec({{}, {}}));
  check.Add("model.layers.0.self_attn.q_proj.weight", Shape{4096, 4096}, Spec({{"tp"}, {"fsdp"}}));
  check.Add("model.layers.1.self_attn.q_norm.weight", Shape{128, 1}, Spec({{}, {}}));
  check.Add("model.layers.7.mlp.gate.weight", Shape{64, 4096}, Spec({{}, {"fsdp"}}));
  const std::vector<Finding> findings = check.Findings();
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("tp=4 shards neither the batch nor the sequence nor any weight of mlp (1 layer)"),
            std::string::npos)
      << findings[0].message;
}

TEST(RedundantComputeTest, LayersAreCountedOnceInAnyOrder) {
  const Mesh mesh{{"dp", "fsdp", "ep", "tp", "sp"}, {1, 1, 1, 2, 1}, {}};
  RedundantComputeCheck check(mesh, kConfig);
  // 300 layers, each seen three times, interleaved across two modules and out of order.
  for (int pass = 0; pass < 3; ++pass) {
    for (int i = 0; i < 300; ++i) {
      const int layer = (i * 7 + pass * 11) % 300;
      check.Add("model/layers/" + std::to_string(layer) + "/self_attn/q_proj/kernel", Shape{64, 64}, Spec({{}, {}}));
      if (layer < 150) {
        check.Add("model/layers/" + std::to_string(layer + 150) + "/mlp/up_proj/kernel", Shape{64, 64}, Spec({{}, {}}));
      }
    }
  }
  const std::vector<Finding> findings = check.Findings();
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("of mlp, self_attn (300 layers)"), std::string::npos) << findings[0].message;
}

TEST(RedundantComputeTest, TheLayerIsTheFirstNumberWithAModuleAndANameBelowIt) {
  const Mesh mesh{{"dp", "fsdp", "ep", "tp", "sp"}, {1, 1, 1, 2, 1}, {}};
  RedundantComputeCheck check(mesh, kConfig);
  check.Add("blocks.1234567890.5.attn.w", Shape{8, 8}, Spec({{}, {}}));  // ten digits are no layer number
  check.Add("blocks.007.attn.w", Shape{8, 8}, Spec({{}, {}}));           // layer 7
  check.Add("blocks.3.attn", Shape{8, 8}, Spec({{}, {}}));               // no name below the module
  check.Add("head.weight.3", Shape{8, 8}, Spec({{}, {}}));               // a number last
  const std::vector<Finding> findings = check.Findings();
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("of attn (2 layers)"), std::string::npos) << findings[0].message;
}

}  // namespace
}  // namespace easyplan::planner
