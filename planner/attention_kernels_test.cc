// The attention kernels (easydel/operations/kernels/) as unit tests: the mode each recomputes from the
// query's shape, its layout and mni, and the specs it hands to shard_map.
#include "planner/attention_kernels.h"

#include <gtest/gtest.h>

#include "planner/activations_test_util.h"

namespace easyplan::planner {
namespace {

using activations_testing::B;
using activations_testing::DP;
using activations_testing::kC1;
using activations_testing::KernelTest;
using activations_testing::N;
using activations_testing::SP;
using activations_testing::TP;
using plan_testing::FiveAxisMesh;
using plan_testing::P;

// ---- Which mode and which specs each kernel uses (easydel/operations/kernels/) -------------------------

TEST_F(KernelTest, Section24TableModeTestLayoutAndMni) {
  struct Row {
    std::string kernel, easydel;
    int mode_dim;
    AttnLayout layout;
    bool mni, shard_map, transposed;
  };
  const Row rows[] = {
      {"flash_attn2", "flash_attn2", 1, AttnLayout::kBthd, false, true, false},
      {"paged_flash", "paged_flash_attention", 1, AttnLayout::kBthd, false, true, false},
      {"sdpa", "sdpa", 1, AttnLayout::kBthd, false, true, false},
      {"vanilla", "vanilla", 1, AttnLayout::kBthd, false, false, false},
      {"ring", "ring", 2, AttnLayout::kBthd, true, true, false},
      {"blocksparse", "blocksparse", 2, AttnLayout::kBhtd, true, true, true},
      {"decode", "autoregressive_decodeattn", 1, AttnLayout::kBthd, false, true, false},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.kernel);
    // The EasyDeL name selects the same kernel as easyplan's.
    const KernelReport report = Example(row.easydel);
    EXPECT_EQ(report.name, row.kernel);
    EXPECT_EQ(report.easydel_name, row.easydel);
    EXPECT_EQ(report.selected_by, "--kernel");
    EXPECT_EQ(report.mode_dim, row.mode_dim);
    EXPECT_EQ(report.layout, row.layout);
    EXPECT_EQ(report.qkv_mni, row.mni);
    EXPECT_EQ(report.shard_map, row.shard_map);
    EXPECT_EQ(report.transposed, row.transposed);
    // The query length (1) decides for the dim-1 kernels; ring and blocksparse see the 32 heads.
    EXPECT_EQ(report.tested, row.mode_dim == 1 ? 1 : 32);
    EXPECT_EQ(report.kernel_mode, row.mode_dim == 1 ? Mode::kDecode : Mode::kTrain);
  }
}

TEST_F(KernelTest, Section24WorkedExampleUnderC1) {
  // flash_attn2 passes P("dp", None, "tp", None) for query, key and value.
  const KernelReport flash = Example("flash_attn2");
  for (const char* name : {"query", "key", "value", "output"}) {
    EXPECT_EQ(Applied(flash, name), P({DP, N, TP, N})) << name;
    EXPECT_TRUE(Spec(flash, name)->corrected);
  }
  EXPECT_EQ(Spec(flash, "query")->shape, (Shape{8, 1, 32, 128}));
  EXPECT_EQ(Spec(flash, "key")->shape, (Shape{8, 4096, 8, 128}));
  EXPECT_EQ(Applied(flash, "bias"), P({DP, N, N, N}));  // keeps [0, 1]; the bias head entry is None
  EXPECT_EQ(Applied(flash, "cu_seqlens"), P({N}));
  // vanilla applies the full specs, corrected: sp does not divide the query length 1.
  const KernelReport vanilla = Example("vanilla");
  EXPECT_EQ(Applied(vanilla, "query"), P({DP, N, TP, N}));
  EXPECT_EQ(Spec(vanilla, "query")->spec, P({DP, SP, TP, N}));
  EXPECT_EQ(Applied(vanilla, "key"), P({DP, SP, TP, N}));
  EXPECT_EQ(Applied(vanilla, "bias"), P({DP, N, N, N}));  // (8, 32, 1, 4096): sp does not divide 1
  // ring tests the head count (32), so train rules: the batch is B, not "dp".
  const KernelReport ring = Example("ring");
  EXPECT_EQ(Applied(ring, "query"), P({B, N, TP, N}));
  EXPECT_EQ(Applied(ring, "key"), P({B, SP, TP, N}));  // keeps [0, 1, 2]; mni: the query's head axis
  EXPECT_EQ(Spec(ring, "softmax_aux"), nullptr);       // no softmax aux: the kernel passes None
}

TEST_F(KernelTest, Section24SdpaPassesNoTensorSoNothingIsCorrected) {
  // Batch 1 over dp: flash_attn2's correction drops "dp", sdpa keeps it; sdpa passes the whole bias.
  const Json c1 = Config(kC1);
  const Mesh mesh = FiveAxisMesh(2, 2, 1, 2, 2);
  auto flash = BuildKernel(c1, mesh, Mode::kDecode, 1, 4096, "flash_attn2");
  auto sdpa = BuildKernel(c1, mesh, Mode::kDecode, 1, 4096, "sdpa");
  ASSERT_TRUE(flash.ok() && sdpa.ok());
  EXPECT_EQ(Applied(*flash->kernel, "query"), P({N, N, TP, N}));
  EXPECT_EQ(Applied(*sdpa->kernel, "query"), P({DP, N, TP, N}));
  EXPECT_FALSE(Spec(*sdpa->kernel, "query")->corrected);
  EXPECT_EQ(Applied(*sdpa->kernel, "bias"), P({DP, N, SP, N}));  // whole and uncorrected
  EXPECT_EQ(Applied(*sdpa->kernel, "cu_seqlens"), P({DP}));      // P(query[0])
  EXPECT_EQ(Applied(*flash->kernel, "cu_seqlens"), P({N}));
}

TEST_F(KernelTest, Section24RingAndBlocksparseSeeDecodeOnlyForOneHead) {
  const Mesh mesh = FiveAxisMesh(2, 2, 1, 2, 2);
  // 32 heads: train rules even for a one-token step, so C1's decode batch "dp" is never applied.
  auto ring = BuildKernel(Config(kC1), mesh, Mode::kDecode, 8, 4096, "ring", 2);
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(ring->kernel->kernel_mode, Mode::kTrain);
  EXPECT_EQ(Applied(*ring->kernel, "softmax_aux"), P({TP}));  // flattened to 1-D: [HEAD]
  // One attention head: dim 2 is 1, so decode rules, even in train mode with a long query.
  const Json one_head = Config(kC1, R"(, "head_dim": 128)");
  Json single = one_head;
  single["num_attention_heads"] = 1;
  single["num_key_value_heads"] = 1;
  auto ring1 = BuildKernel(single, mesh, Mode::kTrain, 8, 4096, "ring");
  ASSERT_TRUE(ring1.ok()) << ring1.status().ToString();
  EXPECT_EQ(ring1->kernel->tested, 1);
  EXPECT_EQ(ring1->kernel->kernel_mode, Mode::kDecode);
  EXPECT_EQ(Applied(*ring1->kernel, "query"), P({DP, SP, N, N}));  // (8, 4096, 1, 128): tp does not divide 1
  // blocksparse: bhtd, mni, keeps [0, 1] of the transposed (B, H, T, D) tensors.
  auto blocksparse = BuildKernel(Config(), mesh, Mode::kTrain, 8, 4096, "blocksparse", 1);
  ASSERT_TRUE(blocksparse.ok());
  EXPECT_EQ(Spec(*blocksparse->kernel, "query")->shape, (Shape{8, 32, 4096, 128}));
  EXPECT_EQ(Applied(*blocksparse->kernel, "query"), P({B, TP, N, N}));
  EXPECT_EQ(Applied(*blocksparse->kernel, "key"), P({B, TP, N, N}));
  EXPECT_EQ(Applied(*blocksparse->kernel, "softmax_aux"), P({TP}));
}

TEST_F(KernelTest, Section24DecodeKernelSpecsAndItsValueErrorOutsideDecode) {
  const KernelReport decode = Example("decode");
  EXPECT_EQ(Spec(decode, "query3d")->shape, (Shape{8, 32, 128}));
  EXPECT_EQ(Applied(decode, "query3d"), P({DP, TP, N}));
  EXPECT_EQ(Applied(decode, "key"), P({DP, N, TP, N}));
  EXPECT_EQ(Applied(decode, "value"), P({DP, N, TP, N}));
  EXPECT_EQ(Applied(decode, "starts"), P({DP}));
  EXPECT_EQ(Applied(decode, "indexs"), P({DP}));
  EXPECT_EQ(Applied(decode, "output"), P({DP, TP, N}));
  for (Mode mode : {Mode::kTrain, Mode::kPrefill, Mode::kInsert}) {
    auto plan = BuildKernel(Config(kC1), FiveAxisMesh(2, 2, 1, 2, 2), mode, 8, 4096, "decode");
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().kind(), ErrorKind::kBadInput);
    EXPECT_NE(plan.status().ToString().find("ValueError(\"AutoRegressiveDecodeAttn requires decode mode\")"),
              std::string::npos)
        << plan.status().ToString();
  }
  // A one-token query is decode for the kernel whatever the model's mode.
  EXPECT_TRUE(BuildKernel(Config(kC1), FiveAxisMesh(2, 2, 1, 2, 2), Mode::kPrefill, 8, 1, "decode").ok());
}

TEST_F(KernelTest, Section24PagedFlashQueryOutputAndBias) {
  const KernelReport paged = Example("paged_flash");
  EXPECT_EQ(Applied(paged, "query"), P({DP, N, TP, N}));
  EXPECT_EQ(Applied(paged, "output"), P({DP, N, TP, N}));
  EXPECT_EQ(Applied(paged, "bias"), P({DP, N, N, N}));
  EXPECT_EQ(Spec(paged, "key"), nullptr);
}

TEST_F(KernelTest, WithoutShapesTheSpecsAreReportedUncorrected) {
  auto plan =
      BuildKernel(Config(kC1), FiveAxisMesh(2, 2, 1, 2, 2), Mode::kDecode, std::nullopt, std::nullopt, "flash_attn2");
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->kernel->tested, 1);  // decode: the query length is 1
  EXPECT_EQ(Applied(*plan->kernel, "query"), P({DP, N, TP, N}));
  EXPECT_FALSE(Spec(*plan->kernel, "query")->shape.has_value());
  auto train = BuildKernel(Config(), FiveAxisMesh(2, 2, 1, 2, 2), Mode::kTrain, std::nullopt, std::nullopt, "vanilla");
  ASSERT_TRUE(train.ok());
  EXPECT_FALSE(train->kernel->tested.has_value());  // more than 1: train rules
  EXPECT_EQ(train->kernel->kernel_mode, Mode::kTrain);
}

TEST_F(KernelTest, TheConfigSelectsTheKernelByMode) {
  const Json config = Config({"attn_mechanism=flash_attn2", "decode_attn_mechanism=autoregressive_decodeattn"});
  const Mesh mesh = FiveAxisMesh(1, 1, 1, 2, 1);
  struct Row {
    Mode mode;
    std::string kernel, selected_by;
  };
  // FlexibleAttentionModule uses impl_decode only for MODE_DECODE: insert runs attn_mechanism.
  for (const Row& row :
       {Row{Mode::kTrain, "flash_attn2", "attn_mechanism"}, Row{Mode::kPrefill, "flash_attn2", "attn_mechanism"},
        Row{Mode::kDecode, "decode", "decode_attn_mechanism"}, Row{Mode::kInsert, "flash_attn2", "attn_mechanism"}}) {
    auto plan = BuildKernel(config, mesh, row.mode, std::nullopt, std::nullopt, "");
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    ASSERT_TRUE(plan->kernel.has_value());
    EXPECT_EQ(plan->kernel->name, row.kernel);
    EXPECT_EQ(plan->kernel->selected_by, row.selected_by);
  }
  // The default attn_mechanism is vanilla; decode without decode_attn_mechanism uses it too.
  auto plain = BuildKernel(Config(), mesh, Mode::kDecode, std::nullopt, std::nullopt, "");
  ASSERT_TRUE(plain.ok() && plain->kernel);
  EXPECT_EQ(plain->kernel->name, "vanilla");
  EXPECT_EQ(plain->kernel->selected_by, "attn_mechanism");
  // auto is chosen at run time from the platform; other kernels are not modelled: a note, no report.
  for (const char* mechanism : {"auto", "cudnn", "ragged_page_attention_v3"}) {
    auto plan = BuildKernel(Config({std::string("attn_mechanism=") + mechanism}), mesh, Mode::kTrain, std::nullopt,
                            std::nullopt, "");
    ASSERT_TRUE(plan.ok()) << mechanism;
    EXPECT_FALSE(plan->kernel.has_value());
    EXPECT_NE(plan->kernel_note.find(mechanism), std::string::npos) << plan->kernel_note;
  }
  // A config whose attn_mechanism is decode-only still plans a training step (memory, validate and export
  // build one): the kernel section is empty and says why. An explicit --kernel decode stays an error.
  auto decode_only = BuildKernel(Config({"attn_mechanism=autoregressive_decodeattn"}), mesh, Mode::kTrain, 8, 4096, "");
  ASSERT_TRUE(decode_only.ok()) << decode_only.status().ToString();
  EXPECT_FALSE(decode_only->kernel.has_value());
  EXPECT_NE(decode_only->kernel_note.find("attn_mechanism is autoregressive_decodeattn"), std::string::npos)
      << decode_only->kernel_note;
  EXPECT_NE(decode_only->kernel_note.find("runs only in decode"), std::string::npos) << decode_only->kernel_note;
  EXPECT_FALSE(decode_only->residual.empty());
  EXPECT_FALSE(BuildKernel(Config(), mesh, Mode::kTrain, 8, 4096, "decode").ok());
  auto unknown = BuildKernel(Config(), mesh, Mode::kTrain, std::nullopt, std::nullopt, "splash");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().ToString().find("--kernel 'splash'"), std::string::npos);
}

}  // namespace
}  // namespace easyplan::planner
