// The step records (kernels/step_records.h): the gradient sync a training step adds to the dry run's
// forward records, one all-reduce per set of data axes the gradients are replicated on. The pipelined
// records (the stage sends, each stage's sync) are pinned beside the pipelined check
// (kernels/pipeline_check_test.cc), whose sends they must equal.
#include "kernels/step_records.h"

#include <gtest/gtest.h>

#include <vector>

#include "kernels/tiny_llama_test_util.h"

namespace easyplan::kernels {
namespace {

struct Recorded {
  ParamTree tree;
  planner::Plan plan;
  std::vector<CommRecord> sync;
};

Recorded Record(const std::vector<int64_t>& mesh, bool train) {
  const ModelDesc model = TinyLlama();
  Recorded r{LlamaTree(model), {}, {}};
  r.plan = PlanTinyLlama(r.tree, kEasyDelAxes, mesh);
  auto run = DryRunForward(model, r.plan, r.tree);
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  const size_t forward = run->comm.records.size();
  EXPECT_TRUE(AppendStepRecords(model, r.plan, r.tree, {.train = train, .gradient_bytes_per_element = 4}, *run).ok());
  r.sync.assign(run->comm.records.begin() + static_cast<std::ptrdiff_t>(forward), run->comm.records.end());
  for (const CommRecord& c : r.sync) {
    EXPECT_TRUE(c.gradient_sync);
    EXPECT_EQ(c.backward, CommRecord::Backward::kOnly);  // nothing of it moves in the forward
    EXPECT_EQ(c.stage, -1);
  }
  return r;
}

int64_t ParameterElements(const ParamTree& tree) {
  int64_t total = 0;
  for (const TensorEntry& t : tree.tensors) {
    if (t.role == TensorRole::kParameter) total += *t.shape.NumElements();
  }
  return total;
}

TEST(StepRecordsTest, PureDataParallelismAllReducesEveryGradientOverDp) {
  const Recorded r = Record({2, 1, 1, 1, 1}, /*train=*/true);
  ASSERT_EQ(r.sync.size(), 1u);
  EXPECT_EQ(r.sync[0].kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(r.sync[0].axes, std::vector<int>{0});
  EXPECT_EQ(r.sync[0].group_size, 2);
  // A ring all-reduce over 2 devices receives 2 x (2 - 1) / 2 = once the float32 gradients.
  EXPECT_EQ(r.sync[0].bytes_per_device, 4 * ParameterElements(r.tree));
}

TEST(StepRecordsTest, AGradientShardedOnADataAxisIsNotSyncedOverIt) {
  // fsdp=4: whatever the rules shard on fsdp is reduce-scattered by the backward (the gather's transpose),
  // so only what they leave replicated on fsdp is all-reduced over it.
  const Recorded r = Record({1, 4, 1, 1, 1}, /*train=*/true);
  int64_t replicated = 0;
  for (const planner::ParamPlan& p : r.plan.params) {
    const std::vector<std::string> used = p.effective.AllAxes();
    if (std::find(used.begin(), used.end(), "fsdp") == used.end()) {
      replicated += *r.tree.tensors[static_cast<size_t>(p.tensor)].shape.NumElements();
    }
  }
  ASSERT_GT(replicated, 0);                          // the norms at least
  ASSERT_LT(replicated, ParameterElements(r.tree));  // the rules shard the matmuls on fsdp
  ASSERT_EQ(r.sync.size(), 1u);
  EXPECT_EQ(r.sync[0].axes, std::vector<int>{1});
  EXPECT_EQ(r.sync[0].bytes_per_device, 2 * 3 * replicated * 4 / 4);
}

TEST(StepRecordsTest, ServingRecordsNoGradientSync) { EXPECT_TRUE(Record({2, 1, 1, 1, 1}, false).sync.empty()); }

TEST(StepRecordsTest, TensorParallelismAloneSyncsNothing) { EXPECT_TRUE(Record({1, 1, 1, 2, 1}, true).sync.empty()); }

}  // namespace
}  // namespace easyplan::kernels
