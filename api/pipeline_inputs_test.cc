// The pp axis through plan and memory (docs/PIPELINE.md), on bundled examples.
#include "api/pipeline_inputs.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>

#include "api/memory_pipeline.h"
#include "api/plan_pipeline.h"
#include "api/test_models.h"

namespace easyplan::api {
namespace {

PlanOptions Pipelined(const std::string& mesh, const std::string& schedule = "1f1b") {
  PlanOptions options;
  options.mesh.axes = mesh;
  options.pipeline.schedule = schedule;
  options.pipeline.supported = true;
  return options;
}

TEST(PipelineMesh, PpIsOutermostUnlessWrittenAfterAnotherAxis) {
  auto model = LoadExample("llama-3.1-8b");
  ASSERT_TRUE(model);
  StatusOr<PlanInputs> first = PreparePlan(model, Pipelined("pp=4,fsdp=2"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->mesh.axis_names.front(), "pp");
  StatusOr<PlanInputs> after = PreparePlan(model, Pipelined("fsdp=2,pp=4,tp=2"));
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->mesh.axis_names, (std::vector<std::string>{"dp", "fsdp", "pp", "ep", "tp", "sp"}));
}

// issue 44: llama-3.1-8b on pp=4,tp=2 listed 8 of its 34 layout groups with 0 tensors, the unstaged groups
// its tensors' per-stage copies were made from.
TEST(PipelinePlan, NoLayoutGroupIsEmpty) {
  auto model = LoadExample("llama-3.1-8b");
  ASSERT_TRUE(model);
  StatusOr<PlanResult> pipelined = PlanModel(model, Pipelined("pp=4,tp=2"));
  ASSERT_TRUE(pipelined.ok()) << pipelined.status().ToString();
  const planner::Plan& plan = pipelined->plan;
  int64_t tensors = 0;
  for (const planner::LayoutGroup& group : plan.groups) {
    EXPECT_GT(group.tensors, 0) << group.layout.shape().ToString();
    tensors += group.tensors;
  }
  EXPECT_EQ(tensors, static_cast<int64_t>(pipelined->inputs.tree->tensors.size()));
  // Every tensor's group index survives the compaction: its group has its shape.
  for (const planner::ParamPlan& p : plan.params) {
    ASSERT_GE(p.group, 0);
    ASSERT_LT(static_cast<size_t>(p.group), plan.groups.size());
    EXPECT_EQ(plan.groups[static_cast<size_t>(p.group)].layout.shape(),
              pipelined->inputs.tree->tensors[static_cast<size_t>(p.tensor)].shape);
  }
}

TEST(PipelinePlan, EachStageHoldsItsOwnLayersAndTheTotalsAddUp) {
  auto model = LoadExample("llama-3.1-8b");
  ASSERT_TRUE(model);
  StatusOr<PlanResult> pipelined = PlanModel(model, Pipelined("pp=4,fsdp=2"));
  ASSERT_TRUE(pipelined.ok()) << pipelined.status().ToString();
  PlanOptions flat;
  flat.mesh.axes = "fsdp=2";
  StatusOr<PlanResult> whole = PlanModel(model, flat);
  ASSERT_TRUE(whole.ok());
  const planner::Plan& plan = pipelined->plan;
  ASSERT_EQ(plan.pipeline.stages, 4);
  // The four stages together hold what one fsdp=2 replica holds: every tensor once per stage it sits on.
  const std::vector<int64_t> stages = plan.StageBytes();
  EXPECT_EQ(std::accumulate(stages.begin(), stages.end(), int64_t{0}), whole->plan.device_bytes[0]);
  for (const planner::ParamPlan& p : plan.params) {
    const std::string& name = pipelined->inputs.tree->tensors[static_cast<size_t>(p.tensor)].name;
    const planner::LayoutGroup& group = plan.groups[static_cast<size_t>(p.group)];
    if (name == "model/embed_tokens/embedding") {
      EXPECT_TRUE(group.stages.On(0) && !group.stages.On(3)) << name;
    }
    if (name == "lm_head/kernel") {
      EXPECT_TRUE(group.stages.On(3) && !group.stages.On(0)) << name;
    }
    if (name.starts_with("model/layers/9/")) {
      EXPECT_EQ(group.stages.stage, 1) << name;
      // Device 2 (pp coordinate 1 with fsdp=2 inner) holds layer 9; device 0 does not.
      EXPECT_TRUE(group.HeldBy(2) && !group.HeldBy(0)) << name;
    }
  }
}

TEST(PipelinePlan, ReplicaIdsCountOnlyTheStagesThatHoldATensor) {
  // fsdp=2,pp=2,tp=2: device d's pp coordinate is d / 2 % 2. A layer's tensors sit on one stage, the tied
  // embedding of gemma on both: replica ids run 0..Replicas()-1 over the holders, in device order.
  for (const char* example : {"llama-3.1-8b", "gemma-2-9b"}) {
    auto model = LoadExample(example);
    ASSERT_TRUE(model);
    StatusOr<PlanResult> result = PlanModel(model, Pipelined("fsdp=2,pp=2,tp=2"));
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    const planner::Plan& plan = result->plan;
    for (const planner::LayoutGroup& group : plan.groups) {
      std::map<std::vector<planner::Range>, std::vector<int64_t>> holders;  // slice -> replica ids, device order
      for (int64_t d = 0; d < plan.mesh.NumDevices(); ++d) {
        if (group.HeldBy(d)) holders[group.layout.SliceOf(d)].push_back(group.ReplicaIdOn(d, plan.mesh));
      }
      for (const auto& [slice, ids] : holders) {
        std::vector<int64_t> want(static_cast<size_t>(group.Replicas()));
        std::iota(want.begin(), want.end(), 0);
        EXPECT_EQ(ids, want) << example << " " << group.layout.shape().ToString();
      }
    }
  }
}

TEST(PipelinePlan, TooFewMicrobatchesIsAnErrorFindingAndImbalanceAWarning) {
  auto model = LoadExample("llama-3.1-8b");
  ASSERT_TRUE(model);
  PlanOptions options = Pipelined("pp=4,fsdp=2");
  options.pipeline.microbatches = 2;
  StatusOr<PlanResult> result = PlanModel(model, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  bool microbatches = false, imbalance = false;
  for (const planner::Finding& f : result->plan.findings) {
    microbatches |= f.code == planner::FindingCode::kPipelineMicrobatches && f.severity == Severity::kError;
    // The last stage also runs the 128k-vocabulary head: about 30% more matmul work than the mean.
    imbalance |= f.code == planner::FindingCode::kPipelineImbalance && f.message.starts_with("pipeline stage 3");
  }
  EXPECT_TRUE(microbatches);
  EXPECT_TRUE(imbalance);
  options.pipeline.microbatches = 4;
  options.pipeline.layers = "9,9,8,6";
  result = PlanModel(model, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  for (const planner::Finding& f : result->plan.findings) {
    EXPECT_NE(f.code, planner::FindingCode::kPipelineMicrobatches) << f.message;
    EXPECT_NE(f.code, planner::FindingCode::kPipelineImbalance) << f.message;
  }
}

TEST(PipelinePlan, PipelineOptionsWithoutAPpAxisAreRefused) {
  auto model = LoadExample("llama-3.1-8b");
  ASSERT_TRUE(model);
  PlanOptions options = Pipelined("fsdp=8", "gpipe");
  StatusOr<PlanInputs> inputs = PreparePlan(model, options);
  ASSERT_FALSE(inputs.ok());
  EXPECT_NE(inputs.status().diag().message.find("--pp-schedule configures a pipeline"), std::string::npos);
}

TEST(PipelinePlan, ACommandWithoutThePipelineOptionsRefusesAPpAxis) {
  auto model = LoadExample("llama-3.1-8b");
  ASSERT_TRUE(model);
  PlanOptions options = Pipelined("pp=2,fsdp=2");
  options.pipeline.supported = false;
  StatusOr<PlanInputs> inputs = PreparePlan(model, options);
  ASSERT_FALSE(inputs.ok());
  EXPECT_NE(inputs.status().diag().message.find("does not lay out a pipeline"), std::string::npos);
}

planner::MemoryReport PipelineMemory(const std::string& schedule, int64_t microbatches) {
  auto model = LoadExample("llama-3.1-8b");
  EXPECT_TRUE(model);
  MemoryOptions step;
  step.mode = "train";
  step.batch = microbatches;
  step.seq = 2048;
  step.microbatches = microbatches;
  StatusOr<MemoryResult> result = Memory(model, Pipelined("pp=4,fsdp=2", schedule), step);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result->report : planner::MemoryReport();
}

TEST(PipelineMemory, OneF1BStageIKeepsPMinusIMicrobatchesTheWorstStageFirst) {
  const planner::MemoryReport report = PipelineMemory("1f1b", 8);
  ASSERT_EQ(report.stages.size(), 4u);
  EXPECT_EQ(report.stages.front().stage, 0);
  EXPECT_EQ(report.stages.front().in_flight, 4);
  for (size_t i = 1; i < report.stages.size(); ++i) {
    EXPECT_GE(report.stages[i - 1].worst.total, report.stages[i].worst.total);
  }
  // Stage 0 keeps four microbatches of its eight layers, stage 3 one: four times the layer activations.
  const auto by_stage = [&](int64_t s) {
    for (const planner::StageMemory& m : report.stages) {
      if (m.stage == s) return m;
    }
    return planner::StageMemory();
  };
  const int64_t outside = report.breakdown.outside;
  EXPECT_EQ(by_stage(0).worst.activations - outside, 4 * (by_stage(3).worst.activations - outside));
}

TEST(PipelineMemory, AStageKeepsItsWeightsGatheredAndItsGradientsUnshardedForTheStep) {
  const planner::MemoryReport report = PipelineMemory("1f1b", 8);
  for (const planner::StageMemory& s : report.stages) {
    if (s.stage != 1) continue;
    // fsdp=2: the gathered weights add one shard's worth, and so do their unsharded gradients (stage 1 has
    // no logits); the few weights the rules leave whole (norm scales) add nothing.
    EXPECT_NEAR(static_cast<double>(s.worst.transient), 2.0 * static_cast<double>(s.worst.params),
                0.01 * static_cast<double>(s.worst.params));
  }
}

TEST(PipelineMemory, GpipeActivationsExceedOneF1BPastPMicrobatches) {
  const planner::MemoryReport gpipe = PipelineMemory("gpipe", 8);
  const planner::MemoryReport one = PipelineMemory("1f1b", 8);
  EXPECT_GT(gpipe.Worst().activations, one.Worst().activations);
}

TEST(PipelineMemory, DualPipeHoldsTwiceTheParameters) {
  const planner::MemoryReport dual = PipelineMemory("dualpipe", 8);
  const planner::MemoryReport one = PipelineMemory("1f1b", 8);
  int64_t dual_params = 0, one_params = 0;
  for (const planner::StageMemory& s : dual.stages) dual_params += s.worst.params;
  for (const planner::StageMemory& s : one.stages) one_params += s.worst.params;
  EXPECT_EQ(dual_params, 2 * one_params);
}

TEST(PipelineMemory, ServingTakesAnyMicrobatchCount) {
  auto model = LoadExample("llama-3.1-8b");
  ASSERT_TRUE(model);
  MemoryOptions step;
  step.mode = "decode";
  step.batch = 8;
  step.seq = 2048;
  StatusOr<MemoryResult> result = Memory(model, Pipelined("pp=4,fsdp=2"), step);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->report->stages.size(), 4u);
  for (const planner::StageMemory& s : result->report->stages) EXPECT_EQ(s.in_flight, 1);
}

TEST(PipelineMemory, TooFewMicrobatchesIsRefused) {
  auto model = LoadExample("llama-3.1-8b");
  ASSERT_TRUE(model);
  MemoryOptions step;
  step.mode = "train";
  step.batch = 8;
  step.seq = 2048;
  step.microbatches = 2;
  StatusOr<MemoryResult> result = Memory(model, Pipelined("pp=4,fsdp=2"), step);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().diag().message.find("fewer than the 4 pipeline stages"), std::string::npos);
}

}  // namespace
}  // namespace easyplan::api
