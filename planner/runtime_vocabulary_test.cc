// The pinned runtime vocabularies (schemas/runtimes/*.yaml): each parses, names its source at a commit, and
// Check refuses what the source does not have, a typo included.
#include "planner/runtime_vocabulary.h"

#include <gtest/gtest.h>

#include "core/yaml_parse.h"
#include "schemas/data_source.h"

namespace easyplan::planner {
namespace {

RuntimeVocabulary Load(const std::string& path) {
  auto doc = schemas::DataSource::Embedded().ReadDocument(path);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  auto vocabulary = ParseRuntimeVocabulary(*doc);
  EXPECT_TRUE(vocabulary.ok()) << vocabulary.status().ToString();
  return vocabulary.ok() ? *vocabulary : RuntimeVocabulary();
}

TEST(RuntimeVocabularyTest, EachFileNamesItsSourceAtAFullCommit) {
  const std::pair<std::string, std::string> files[] = {
      {"schemas/runtimes/megatron.yaml", "NVIDIA/Megatron-LM"},
      {"schemas/runtimes/maxtext.yaml", "AI-Hypercomputer/maxtext"},
      {"schemas/runtimes/torch_pipelining.yaml", "pytorch/pytorch"},
  };
  for (const auto& [path, repo] : files) {
    const RuntimeVocabulary vocabulary = Load(path);
    EXPECT_EQ(vocabulary.repo, repo) << path;
    EXPECT_EQ(vocabulary.commit.size(), 40u) << path;
    EXPECT_FALSE(vocabulary.paths.empty()) << path;
  }
}

TEST(RuntimeVocabularyTest, MegatronFlagsAreArgumentsPysAndTheDataclassesFlags) {
  const RuntimeVocabulary megatron = Load("schemas/runtimes/megatron.yaml");
  // A literal add_argument flag, one ArgumentGroupFactory derives from ModelParallelConfig, and the
  // --no-/--disable- pair of a bool field that defaults to True.
  EXPECT_TRUE(megatron.Check("flags", "--decoder-first-pipeline-num-layers").ok());
  EXPECT_TRUE(megatron.Check("flags", "--tensor-model-parallel-size").ok());
  EXPECT_TRUE(megatron.Check("flags", "--disable-gloo-process-groups").ok());
  const Status typo = megatron.Check("flags", "--tensor-model-paralel-size");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.kind(), ErrorKind::kInternal);
  EXPECT_NE(typo.diag().message.find("'--tensor-model-paralel-size', which is not among the flags of "
                                     "NVIDIA/Megatron-LM megatron/training/arguments.py at "),
            std::string::npos)
      << typo.diag().message;
  EXPECT_TRUE(megatron.CheckChoice("--recompute-granularity", "selective").ok());
  EXPECT_FALSE(megatron.CheckChoice("--recompute-granularity", "partial").ok());
  EXPECT_TRUE(megatron.CheckChoice("--recompute-modules", "core_attn").ok());
  EXPECT_FALSE(megatron.CheckChoice("--recompute-modules", "core_attention").ok());
  EXPECT_TRUE(megatron.CheckChoice("--seq-length", "4096").ok());  // no literal choices: anything
}

TEST(RuntimeVocabularyTest, MaxTextKeysAreTheConfigModelsFields) {
  const RuntimeVocabulary maxtext = Load("schemas/runtimes/maxtext.yaml");
  EXPECT_TRUE(maxtext.Check("keys", "ici_fsdp_parallelism").ok());
  EXPECT_TRUE(maxtext.Check("keys", "num_pipeline_repeats").ok());
  EXPECT_FALSE(maxtext.Check("keys", "ici_fsdp_parralelism").ok());
  EXPECT_TRUE(maxtext.CheckChoice("remat_policy", "minimal_with_context").ok());
  EXPECT_FALSE(maxtext.CheckChoice("remat_policy", "nothing_saveable").ok());
}

TEST(RuntimeVocabularyTest, TorchSchedulesAreSchedulesPysAll) {
  const RuntimeVocabulary torch = Load("schemas/runtimes/torch_pipelining.yaml");
  for (const char* cls : {"ScheduleGPipe", "Schedule1F1B", "ScheduleInterleaved1F1B", "ScheduleInterleavedZeroBubble",
                          "ScheduleZBVZeroBubble", "ScheduleDualPipeV"}) {
    EXPECT_TRUE(torch.Check("classes", cls).ok()) << cls;
  }
  EXPECT_FALSE(torch.Check("classes", "ScheduleDualPipe").ok());
  EXPECT_TRUE(torch.Check("schedule_names", "InterleavedZeroBubble").ok());
}

TEST(RuntimeVocabularyTest, AMalformedFileIsBadInputAtItsKey) {
  auto doc = ParseYamlDocument("source: {repo: a/b, paths: [x.py], commit: abc}\nflags: [--a, 3]\n", "bad.yaml");
  ASSERT_TRUE(doc.ok());
  auto vocabulary = ParseRuntimeVocabulary(*doc);
  ASSERT_FALSE(vocabulary.ok());
  EXPECT_EQ(vocabulary.status().diag().message, "expected a string");
  EXPECT_EQ(vocabulary.status().diag().loc.pointer, "/flags/1");

  auto no_lists = ParseYamlDocument("source: {repo: a/b, paths: [x.py], commit: abc}\n", "bad.yaml");
  ASSERT_TRUE(no_lists.ok());
  EXPECT_FALSE(ParseRuntimeVocabulary(*no_lists).ok());
}

}  // namespace
}  // namespace easyplan::planner
