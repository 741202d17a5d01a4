// The numeric check of a pipelined plan (kernels/pipeline_check.h, kernels/pipeline_forward.h): a tiny
// llama split over pp stages runs each stage on its own devices and matches the unsharded forward, the
// hidden state crosses every stage boundary as one send/recv of its block per device, and a dropped send
// or a parameter on the wrong stage fails the check.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/dry_run.h"
#include "kernels/numeric_check.h"
#include "kernels/step_records.h"
#include "kernels/tiny_llama_test_util.h"
#include "planner/pipeline.h"
#include "planner/pipeline_stages.h"

namespace easyplan::kernels {
namespace {

// The pp axis first, then EasyDeL's five.
const std::vector<std::string> kPipelinedAxes = {"pp", "dp", "fsdp", "ep", "tp", "sp"};

class PipelineCheckTest : public ::testing::Test {
 protected:
  // The built-in llama rules on `tree` over pp=sizes[0] x the EasyDeL axes, the layers split into
  // stages x virtual_stages equal chunks.
  planner::Plan Plan(const ParamTree& tree, std::vector<int64_t> sizes, int64_t virtual_stages = 1) {
    rules::RuleLibrary library(schemas::DataSource::Embedded());
    const Json config = TestConfig();
    auto rules = library.ForModelType("llama");
    EXPECT_TRUE(rules.ok());
    const planner::PipelineSchedule schedule =
        virtual_stages > 1 ? planner::PipelineSchedule::kInterleaved : planner::PipelineSchedule::k1F1B;
    auto split = planner::SplitLayers(model_.layers, sizes[0], virtual_stages, schedule, {});
    EXPECT_TRUE(split.ok()) << split.status().ToString();
    std::vector<planner::OuterTensor> outer;
    for (const TensorEntry& t : tree.tensors) {
      outer.push_back(t.name == "model/embed_tokens/embedding" ? planner::OuterTensor::kFirst
                                                               : planner::OuterTensor::kLast);
    }
    planner::PlanRequest request;
    request.tree = &tree;
    request.rules = *rules;
    request.presets = *library.GetPresets();
    request.config = &config;
    request.mesh.axis_names = kPipelinedAxes;
    request.mesh.shape = std::move(sizes);
    request.pipeline = *split;
    request.pp_axis = 0;
    request.placements = planner::PlaceOnStages(tree, *split, outer);
    auto plan = planner::BuildPlan(request);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    return std::move(*plan);
  }

  NumericReport Run(const planner::Plan& plan, const ParamTree& tree, Injection injection = Injection::kNone) {
    auto report = RunNumericCheck(model_, plan, tree, NumericOptions{.seed = 3, .injection = injection});
    if (!report.ok()) {
      ADD_FAILURE() << report.status().ToString();
      return {};
    }
    return std::move(*report);
  }

  static std::vector<CommRecord> Sends(const NumericReport& r) {
    std::vector<CommRecord> sends;
    for (const CommRecord& c : r.comm.records) {
      if (c.kind == CollectiveKind::kSendRecv) sends.push_back(c);
    }
    return sends;
  }

  static void ExpectEveryOutputAgrees(const NumericReport& r, size_t outputs) {
    EXPECT_TRUE(r.ok());
    EXPECT_TRUE(r.executed);
    EXPECT_EQ(r.shard_errors_total, 0);
    ASSERT_EQ(r.comparisons.size(), outputs);
    EXPECT_EQ(r.comparisons.front().name, "embed");
    EXPECT_EQ(r.comparisons.back().name, "logits");
    for (const Comparison& c : r.comparisons) EXPECT_TRUE(c.ok) << c.name << " nmse " << c.nmse;
  }

  // The hidden state [batch, seq, hidden] a stage hands on: its bytes per device when `tiles` devices
  // of a stage split it.
  int64_t HiddenStateBytes(int64_t tiles) const {
    return model_.batch * model_.seq * model_.hidden * model_.bytes_per_element / tiles;
  }

  ModelDesc model_ = TinyLlama();
};

TEST_F(PipelineCheckTest, TwoStagesMatchTheUnshardedForwardAndSendTheHiddenStateOnce) {
  const ParamTree tree = LlamaTree(model_);
  const NumericReport r = Run(Plan(tree, {2, 1, 1, 1, 1, 1}), tree);
  ExpectEveryOutputAgrees(r, 4);
  const std::vector<CommRecord> sends = Sends(r);
  ASSERT_EQ(sends.size(), 1u);  // 2 layers, one per stage: one boundary
  EXPECT_EQ(sends[0].scope, "layer 1");
  EXPECT_EQ(sends[0].stage, 0);
  EXPECT_EQ(sends[0].to_stage, 1);
  // One device per stage: each sends the whole hidden state, 4 x 8 x 32 two-byte elements.
  EXPECT_EQ(sends[0].bytes_per_device, HiddenStateBytes(1));
  EXPECT_EQ(r.comm.Bytes(CollectiveKind::kSendRecv), 2048);
  // Nothing else moves: each stage holds its whole layers.
  EXPECT_EQ(r.comm.records.size(), 1u);
}

TEST_F(PipelineCheckTest, EachStageHoldsOnlyItsOwnParameters) {
  const ParamTree tree = LlamaTree(model_);
  const NumericReport r = Run(Plan(tree, {2, 1, 1, 1, 1, 1}), tree);
  // Device 0 (stage 0): the embedding and layer 0; device 1 (stage 1): layer 1, the final norm and the
  // head. Every tensor float32, whole on its one device.
  int64_t first = 0, last = 0;
  for (const TensorEntry& t : tree.tensors) {
    const int64_t bytes = *t.shape.NumElements() * 4;
    const bool on_first = t.name == "model/embed_tokens/embedding" || t.name.starts_with("model/layers/0/");
    (on_first ? first : last) += bytes;
  }
  EXPECT_EQ(r.measured_params, (std::vector<int64_t>{first, last}));
}

TEST_F(PipelineCheckTest, TwoStagesTimesTensorParallelSendEachDevicesBlock) {
  const ParamTree tree = LlamaTree(model_);
  const planner::Plan plan = Plan(tree, {2, 1, 1, 1, 2, 1});
  const NumericReport r = Run(plan, tree);
  ExpectEveryOutputAgrees(r, 4);
  const std::vector<CommRecord> sends = Sends(r);
  ASSERT_EQ(sends.size(), 1u);
  // The hidden state is sharded on tp (hidden_state_axis): device i of stage 0 sends its half to device i
  // of stage 1.
  EXPECT_EQ(sends[0].bytes_per_device, HiddenStateBytes(2));
  EXPECT_EQ(sends[0].tensor_spec, "P(None, None, 'tp')");
  // The tensor-parallel collectives run inside each stage, on its own devices: layer 0's on stage 0,
  // layer 1's and the head's on stage 1.
  int64_t on_first = 0, on_last = 0;
  for (const CommRecord& c : r.comm.records) {
    if (c.kind == CollectiveKind::kSendRecv) continue;
    EXPECT_EQ(c.group_size, 2) << c.op;
    EXPECT_EQ(c.stage, c.scope == "layer 0" ? 0 : 1) << c.scope << " " << c.op;
    (c.stage == 0 ? on_first : on_last) += 1;
  }
  EXPECT_GT(on_first, 0);
  EXPECT_GT(on_last, on_first);  // the head's too
}

TEST_F(PipelineCheckTest, InterleavedChunksCrossTheStagesInChunkOrder) {
  model_.layers = 4;  // pp=2 x 2 virtual stages: chunk c (layer c) on stage c mod 2
  const ParamTree tree = LlamaTree(model_);
  const NumericReport r = Run(Plan(tree, {2, 1, 1, 1, 2, 1}, 2), tree);
  ExpectEveryOutputAgrees(r, 6);
  const std::vector<CommRecord> sends = Sends(r);
  ASSERT_EQ(sends.size(), 3u);
  const std::vector<std::pair<int64_t, int64_t>> hops = {{0, 1}, {1, 0}, {0, 1}};
  for (size_t i = 0; i < sends.size(); ++i) {
    EXPECT_EQ(sends[i].scope, "layer " + std::to_string(i + 1));
    EXPECT_EQ(std::make_pair(sends[i].stage, sends[i].to_stage), hops[i]);
    EXPECT_EQ(sends[i].bytes_per_device, HiddenStateBytes(2));
  }
  EXPECT_EQ(r.comm.Bytes(CollectiveKind::kSendRecv), 3 * HiddenStateBytes(2));
  // Stage 0 runs layers 0 and 2, stage 1 layers 1 and 3 and the head.
  for (const CommRecord& c : r.comm.records) {
    if (c.kind == CollectiveKind::kSendRecv) continue;
    const int64_t layer = c.scope == "final" ? 3 : std::stoll(c.scope.substr(6));
    EXPECT_EQ(c.stage, layer % 2) << c.scope << " " << c.op;
  }
}

// The step model prices the sends the dry run records (kernels/step_records.h): the same records, field by
// field, as the sends this check executes.
TEST_F(PipelineCheckTest, TheDryRunRecordsTheSendsThePipelinedCheckExecutes) {
  struct Case {
    int64_t layers;
    std::vector<int64_t> mesh;
    int64_t virtual_stages;
  };
  for (const Case& c :
       {Case{2, {2, 1, 1, 1, 1, 1}, 1}, Case{2, {2, 1, 2, 1, 2, 1}, 1}, Case{4, {2, 1, 1, 1, 2, 1}, 2}}) {
    model_.layers = c.layers;
    const ParamTree tree = LlamaTree(model_);
    const planner::Plan plan = Plan(tree, c.mesh, c.virtual_stages);
    const std::vector<CommRecord> executed = Sends(Run(plan, tree));
    auto run = DryRunForward(model_, plan, tree);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    ASSERT_TRUE(AppendStepRecords(model_, plan, tree, {}, *run).ok());
    std::vector<CommRecord> recorded;
    for (const CommRecord& r : run->comm.records) {
      if (r.kind == CollectiveKind::kSendRecv) recorded.push_back(r);
    }
    ASSERT_EQ(recorded.size(), executed.size());
    ASSERT_FALSE(recorded.empty());
    for (size_t i = 0; i < recorded.size(); ++i) {
      const CommRecord &a = recorded[i], &b = executed[i];
      EXPECT_EQ(std::tie(a.scope, a.op, a.tensor_spec, a.group_size, a.bytes_per_device, a.axes, a.stage, a.to_stage),
                std::tie(b.scope, b.op, b.tensor_spec, b.group_size, b.bytes_per_device, b.axes, b.stage, b.to_stage))
          << i << ": " << a.scope << " " << a.tensor_spec << " " << a.bytes_per_device << " vs " << b.scope << " "
          << b.tensor_spec << " " << b.bytes_per_device;
    }
  }
}

// A pipelined step syncs each stage's gradients on its own devices: one record per stage, over the stage's
// parameters.
TEST_F(PipelineCheckTest, EachStageSyncsTheGradientsOfItsOwnParameters) {
  const ParamTree tree = LlamaTree(model_);
  const planner::Plan plan = Plan(tree, {2, 2, 1, 1, 1, 1});
  auto run = DryRunForward(model_, plan, tree);
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(AppendStepRecords(model_, plan, tree, {.train = true, .gradient_bytes_per_element = 4}, *run).ok());
  std::vector<int64_t> elements(2, 0);
  for (const planner::ParamPlan& p : plan.params) {
    for (int64_t s = 0; s < 2; ++s) {
      if (plan.groups[static_cast<size_t>(p.group)].stages.On(s)) {
        elements[static_cast<size_t>(s)] += *tree.tensors[static_cast<size_t>(p.tensor)].shape.NumElements();
      }
    }
  }
  std::vector<int64_t> synced(2, 0);
  for (const CommRecord& r : run->comm.records) {
    if (!r.gradient_sync) continue;
    ASSERT_TRUE(r.stage == 0 || r.stage == 1);
    EXPECT_EQ(r.axes, std::vector<int>{1});  // dp, after pp
    synced[static_cast<size_t>(r.stage)] += r.bytes_per_device;
  }
  // dp=2: a ring all-reduce receives 2 x (2 - 1) / 2 = once the stage's float32 gradients.
  EXPECT_EQ(synced, (std::vector<int64_t>{4 * elements[0], 4 * elements[1]}));
  EXPECT_GT(elements[1], elements[0]);  // the head's
}

TEST_F(PipelineCheckTest, ADroppedStageSendFailsTheCheck) {
  const ParamTree tree = LlamaTree(model_);
  const NumericReport r = Run(Plan(tree, {2, 1, 1, 1, 2, 1}), tree, Injection::kDropStageSend);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.comm.dropped_sends, 1);
  ASSERT_EQ(r.comparisons.size(), 4u);
  EXPECT_TRUE(r.comparisons[0].ok);       // embed, on stage 0
  EXPECT_TRUE(r.comparisons[1].ok);       // layer 0, on stage 0
  EXPECT_FALSE(r.comparisons[2].ok);      // layer 1 started from zeros on stage 1
  EXPECT_EQ(r.comparisons[2].device, 2);  // the first device of stage 1, in the whole mesh's numbering
  EXPECT_FALSE(r.comparisons[3].ok);
}

TEST_F(PipelineCheckTest, AParameterOnTheWrongStageIsAShardErrorOfTheStageThatReadsIt) {
  const ParamTree tree = LlamaTree(model_);
  planner::Plan plan = Plan(tree, {2, 1, 1, 1, 1, 1});
  for (const planner::ParamPlan& p : plan.params) {
    if (tree.tensors[static_cast<size_t>(p.tensor)].name == "model/layers/1/mlp/down_proj/kernel") {
      plan.groups[static_cast<size_t>(p.group)].stages = planner::StagePlacement{0, -1};
    }
  }
  const NumericReport r = Run(plan, tree);
  EXPECT_FALSE(r.ok());
  // The group moved holds every tensor of its shape and layout (o_proj's too): each is an error.
  auto it = std::find_if(r.shard_errors.begin(), r.shard_errors.end(),
                         [](const ShardError& e) { return e.param == "model/layers/1/mlp/down_proj/kernel"; });
  ASSERT_NE(it, r.shard_errors.end());
  EXPECT_EQ(it->device, 1);
  EXPECT_EQ(it->message,
            "pipeline stage 1 (device 1) runs a layer that reads it, but the plan puts it on stage 0 only");
  // It reads as zeros there, so the outputs from layer 1 on differ from the reference too.
  EXPECT_TRUE(r.comparisons[1].ok);
  EXPECT_FALSE(r.comparisons[2].ok);
}

TEST_F(PipelineCheckTest, AGroupWhoseDevicesDisagreeWithItsStagesIsAShardError) {
  const ParamTree tree = LlamaTree(model_);
  planner::Plan plan = Plan(tree, {2, 1, 1, 1, 1, 1});
  for (const planner::ParamPlan& p : plan.params) {
    if (tree.tensors[static_cast<size_t>(p.tensor)].name == "model/norm/kernel") {
      plan.groups[static_cast<size_t>(p.group)].pp_stride = 2;  // device 1 now reads as stage 0
    }
  }
  const NumericReport r = Run(plan, tree);
  EXPECT_FALSE(r.ok());
  auto it = std::find_if(r.shard_errors.begin(), r.shard_errors.end(),
                         [](const ShardError& e) { return e.param == "model/norm/kernel"; });
  ASSERT_NE(it, r.shard_errors.end());
  EXPECT_EQ(it->message, "the plan puts it on pipeline stage 1, but not on device 1 of that stage");
}

TEST_F(PipelineCheckTest, ShardMutationsStillFailOnAStage) {
  const ParamTree tree = LlamaTree(model_);
  const planner::Plan plan = Plan(tree, {2, 1, 2, 1, 2, 1});
  for (Injection injection : {Injection::kCorruptShard, Injection::kOffsetBlock, Injection::kWrongDim}) {
    const NumericReport r = Run(plan, tree, injection);
    EXPECT_FALSE(r.ok()) << InjectionName(injection);
    EXPECT_GT(r.shard_errors_total, 0) << InjectionName(injection);
  }
  const NumericReport dropped = Run(plan, tree, Injection::kDropAllReduce);
  EXPECT_EQ(dropped.comm.dropped_all_reduces, 1);
  EXPECT_FALSE(dropped.ok());
}

}  // namespace
}  // namespace easyplan::kernels
