// export --to megatron, maxtext and torch (pipelined): every flag, key and schedule name written is one of
// the pinned lists (schemas/runtimes/*.yaml, read here straight from the YAML, not through the exporter's
// own check), each mapping is the one docs/FORMATS.md describes, and what the runtime lacks is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/export.h"
#include "api/test_models.h"
#include "schemas/data_source.h"

namespace easyplan::api {
namespace {

// One list of a schemas/runtimes file, as the YAML has it.
std::set<std::string> PinnedList(const std::string& file, const std::string& list) {
  auto doc = schemas::DataSource::Embedded().ReadDocument("schemas/runtimes/" + file);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  std::set<std::string> out;
  if (doc.ok()) {
    for (const Json& name : doc->root()[list]) out.insert(name.get<std::string>());
  }
  return out;
}

std::set<std::string> PinnedChoices(const std::string& file, const std::string& name) {
  auto doc = schemas::DataSource::Embedded().ReadDocument("schemas/runtimes/" + file);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  std::set<std::string> out;
  if (doc.ok() && doc->root()["choices"].contains(name)) {
    for (const Json& value : doc->root()["choices"][name]) out.insert(value.get<std::string>());
  }
  return out;
}

struct RuntimeCase {
  std::string example;
  std::string mesh;
  std::string schedule = "1f1b";
  int64_t virtual_stages = 1;
  std::string pp_layers;
  std::optional<int64_t> batch, seq, microbatches;
  std::string checkpointing;  ///< gradient_checkpointing, "" = the example's
  std::string dcn;
};

StatusOr<ExportResult> ExportCase(const std::string& to, const RuntimeCase& c, bool json = false) {
  ConfigOptions config;
  if (!c.checkpointing.empty()) config.sets.push_back("gradient_checkpointing=" + c.checkpointing);
  auto model = LoadExample(c.example, config);
  if (!model) return Status::Internal("no model");
  ExportOptions options;
  options.to = to;
  options.format = json ? "json" : "text";
  options.plan.mesh.axes = c.mesh;
  options.plan.mesh.dcn = c.dcn;
  options.plan.pipeline.schedule = c.schedule;
  options.plan.pipeline.virtual_stages = c.virtual_stages;
  options.plan.pipeline.layers = c.pp_layers;
  options.plan.pipeline.supported = true;
  options.plan.pipeline.microbatches = c.microbatches;
  options.batch = c.batch;
  options.seq = c.seq;
  options.microbatches = c.microbatches;
  return Export(model, options);
}

std::string ExportText(const std::string& to, const RuntimeCase& c) {
  auto result = ExportCase(to, c);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return "";
  EXPECT_FALSE(result->failed);
  return result->text;
}

// The refusal's message (a BadInput); "" when the export did not fail that way.
std::string ExportRefusal(const std::string& to, const RuntimeCase& c) {
  auto result = ExportCase(to, c);
  if (result.ok()) return "";
  EXPECT_EQ(result.status().kind(), ErrorKind::kBadInput) << result.status().ToString();
  return result.status().diag().message;
}

bool HasArgLine(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

const std::vector<RuntimeCase>& MegatronCases() {
  static const std::vector<RuntimeCase> kCases = {
      {.example = "llama-3.1-8b",
       .mesh = "pp=4,fsdp=2,tp=2",
       .batch = 64,
       .seq = 4096,
       .microbatches = 8,
       .checkpointing = "nothing_saveable"},
      {.example = "llama-3.1-8b",
       .mesh = "pp=4,dp=2,fsdp=2",
       .schedule = "interleaved",
       .virtual_stages = 2,
       .batch = 64,
       .microbatches = 8,
       .checkpointing = "checkpoint_dots"},
      {.example = "llama-3.1-8b",
       .mesh = "pp=4,tp=2",
       .pp_layers = "9,9,8,6",
       .batch = 16,
       .microbatches = 4,
       .checkpointing = "checkpoint_dots_with_no_batch_dims"},
      {.example = "llama-3.1-8b", .mesh = "pp=4,sp=2", .pp_layers = "7,9,9,7", .seq = 8192},
      {.example = "mixtral-8x7b", .mesh = "fsdp=4,ep=2,tp=2", .batch = 32, .checkpointing = "dots_saveable"},
      {.example = "qwen3-30b-a3b",
       .mesh = "pp=2,ep=4,sp=2",
       .schedule = "interleaved",
       .virtual_stages = 3,
       .pp_layers = "9,8,8,8,8,7",
       .batch = 64,
       .seq = 4096,
       .microbatches = 4},
  };
  return kCases;
}

TEST(ExportMegatronTest, EveryFlagAndChoiceIsInThePinnedArgumentsPy) {
  const std::set<std::string> flags = PinnedList("megatron.yaml", "flags");
  ASSERT_GT(flags.size(), 500u);
  for (const RuntimeCase& c : MegatronCases()) {
    auto result = ExportCase("megatron", c, /*json=*/true);
    ASSERT_TRUE(result.ok()) << c.example << " " << c.mesh << ": " << result.status().ToString();
    const Json argv = Json::parse(result->text)["arguments"];
    ASSERT_FALSE(argv.empty());
    std::string flag;
    for (const Json& token : argv) {
      const std::string text = token.get<std::string>();
      if (text.starts_with("--")) {
        flag = text;
        EXPECT_EQ(flags.count(flag), 1u) << flag << " (" << c.example << " " << c.mesh << ")";
        continue;
      }
      const std::set<std::string> choices = PinnedChoices("megatron.yaml", flag);
      if (!choices.empty()) {
        EXPECT_EQ(choices.count(text), 1u) << flag << " " << text;
      }
    }
  }
}

TEST(ExportMegatronTest, TheParallelSizesAndTheStep) {
  const std::string text = ExportText("megatron", MegatronCases()[0]);
  // pp=4, fsdp=2, tp=2: 2 data-parallel ranks, 64 sequences in 8 microbatches of 4 per rank.
  for (const char* line :
       {"--tensor-model-parallel-size 2", "--pipeline-model-parallel-size 4", "--context-parallel-size 1",
        "--sequence-parallel", "--use-megatron-fsdp", "--data-parallel-sharding-strategy optim_grads_params",
        "--ckpt-format fsdp_dtensor", "--seq-length 4096", "--micro-batch-size 4", "--global-batch-size 64",
        "--recompute-granularity full", "--recompute-method uniform", "--recompute-num-layers 1"}) {
    EXPECT_TRUE(HasArgLine(text, line)) << line << "\n" << text;
  }
  EXPECT_EQ(text.find("--expert-model-parallel-size"), std::string::npos);  // a dense model
  EXPECT_EQ(text.find("--num-distributed-optimizer-instances"), std::string::npos);
}

TEST(ExportMegatronTest, TheStageSplitIsFirstAndLastCountsOrALayout) {
  // Equal chunks over virtual stages: the virtual stage count, and dp=2 over fsdp=2 is HSDP.
  const std::string interleaved = ExportText("megatron", MegatronCases()[1]);
  EXPECT_TRUE(HasArgLine(interleaved, "--num-virtual-stages-per-pipeline-rank 2")) << interleaved;
  EXPECT_TRUE(HasArgLine(interleaved, "--num-distributed-optimizer-instances 2")) << interleaved;
  EXPECT_TRUE(HasArgLine(interleaved, "--recompute-modules layernorm")) << interleaved;
  // Middle stages that differ: a layout, embedding first and loss last.
  const std::string layout = ExportText("megatron", MegatronCases()[2]);
  EXPECT_TRUE(HasArgLine(layout, "--pipeline-model-parallel-layout Ettttttttt|ttttttttt|tttttttt|ttttttL")) << layout;
  EXPECT_TRUE(HasArgLine(layout, "--recompute-modules core_attn layernorm")) << layout;
  // Equal middle stages: Megatron's own first/last counts, and the sequence over 2 x cp.
  const std::string first_last = ExportText("megatron", MegatronCases()[3]);
  EXPECT_TRUE(HasArgLine(first_last, "--decoder-first-pipeline-num-layers 7")) << first_last;
  EXPECT_TRUE(HasArgLine(first_last, "--decoder-last-pipeline-num-layers 7")) << first_last;
  EXPECT_TRUE(HasArgLine(first_last, "--context-parallel-size 2")) << first_last;
  // Counts easyplan chose (32 layers over 3 stages: 11, 11, 10): only the last differs.
  const std::string balanced = ExportText("megatron", {.example = "llama-3.1-8b", .mesh = "pp=3"});
  EXPECT_TRUE(HasArgLine(balanced, "--decoder-last-pipeline-num-layers 10")) << balanced;
  EXPECT_EQ(balanced.find("--decoder-first"), std::string::npos) << balanced;
  // A first stage that only embeds (Megatron's counts must be above 0): a layout whose first entry is 'E'.
  const std::string embed_alone =
      ExportText("megatron", {.example = "llama-3.1-8b", .mesh = "pp=4", .pp_layers = "0,11,11,10"});
  EXPECT_TRUE(HasArgLine(embed_alone, "--pipeline-model-parallel-layout E|ttttttttttt|ttttttttttt|ttttttttttL"))
      << embed_alone;
  // Interleaved chunks that differ: one layout entry per chunk, no virtual stage flag beside it.
  const std::string chunks = ExportText("megatron", MegatronCases()[5]);
  EXPECT_TRUE(HasArgLine(chunks,
                         "--pipeline-model-parallel-layout Ettttttttt|tttttttt|tttttttt|tttttttt|tttttttt|"
                         "tttttttL"))
      << chunks;
  EXPECT_EQ(chunks.find("--num-virtual-stages"), std::string::npos) << chunks;
}

TEST(ExportMegatronTest, ExpertParallelismIsTheFoldedExpertMesh) {
  // Mixtral on fsdp=4, ep=2: EasyDeL's fused MoE runs its experts over ep x fsdp = 8.
  const std::string text = ExportText("megatron", MegatronCases()[4]);
  EXPECT_TRUE(HasArgLine(text, "--expert-model-parallel-size 8")) << text;
  EXPECT_TRUE(HasArgLine(text, "--micro-batch-size 4")) << text;  // 32 over fsdp x ep = 8 ranks
  const std::string qwen = ExportText("megatron", MegatronCases()[5]);
  EXPECT_TRUE(HasArgLine(qwen, "--expert-model-parallel-size 8")) << qwen;  // ep x sp
}

TEST(ExportMegatronTest, WhatMegatronCannotRunIsRefusedWithTheReason) {
  EXPECT_EQ(ExportRefusal("megatron", {.example = "llama-3.1-8b", .mesh = "pp=4", .schedule = "gpipe"}),
            "--pp-schedule gpipe: Megatron-LM runs 1F1B, or with virtual stages interleaved 1F1B, only "
            "(megatron/core/pipeline_parallel/schedules.py, get_forward_backward_func)");
  EXPECT_NE(ExportRefusal("megatron", {.example = "llama-3.1-8b", .mesh = "pp=4", .schedule = "zero-bubble"}), "");
  EXPECT_NE(ExportRefusal("megatron", {.example = "llama-3.1-8b", .mesh = "pp=4", .schedule = "dualpipe"}), "");
  EXPECT_EQ(ExportRefusal("megatron", {.example = "llama-3.1-8b", .mesh = "fsdp=4,ep=2"}),
            "--mesh ep=2: the model has no experts, and Megatron-LM's --expert-model-parallel-size applies to MoE "
            "layers only");
  EXPECT_EQ(ExportRefusal("megatron", {.example = "llama-3.1-8b", .mesh = "fsdp=8", .microbatches = 4}),
            "--microbatches 4 needs --batch for --to megatron");
  EXPECT_EQ(ExportRefusal("megatron", {.example = "llama-3.1-8b", .mesh = "fsdp=8", .batch = 12}),
            "--batch 12 is not a multiple of --microbatches 1 x the 8 data-parallel ranks (dp x fsdp x ep = 1 x 8 "
            "x 1): Megatron-LM's --micro-batch-size would not be whole");
  EXPECT_EQ(ExportRefusal("megatron", {.example = "llama-3.1-8b", .mesh = "fsdp=2,sp=4", .seq = 4100}),
            "--seq 4100 is not a multiple of 2 x the context-parallel size 4 (sp): Megatron-LM asserts it");
  EXPECT_EQ(
      ExportRefusal("megatron", {.example = "llama-3.1-8b", .mesh = "fsdp=8", .checkpointing = "mlp_notsaveable"}),
      "config: gradient_checkpointing 'mlp_notsaveable' saves activations by their names inside EasyDeL's "
      "modules, which Megatron-LM does not have");
  EXPECT_EQ(ExportRefusal("megatron", {.example = "mixtral-8x7b", .mesh = "fsdp=16"}),
            "the model's 8 experts over the 16 ranks of EasyDeL's expert mesh (ep x fsdp x sp = 1 x 16 x 1): "
            "Megatron-LM's --expert-model-parallel-size must divide the experts");
  // One microbatch cannot fill 1F1B's warm-up over 4 stages.
  EXPECT_NE(ExportRefusal("megatron", {.example = "llama-3.1-8b", .mesh = "pp=4", .batch = 8}).find("microbatch"),
            std::string::npos);
}

TEST(ExportMaxTextTest, EveryKeyAndRematPolicyIsInThePinnedConfigTypes) {
  const std::set<std::string> keys = PinnedList("maxtext.yaml", "keys");
  const std::set<std::string> policies = PinnedChoices("maxtext.yaml", "remat_policy");
  ASSERT_GT(keys.size(), 300u);
  const std::vector<RuntimeCase> cases = {
      {.example = "llama-3.1-8b",
       .mesh = "pp=4,fsdp=2,tp=2",
       .schedule = "gpipe",
       .batch = 64,
       .seq = 4096,
       .microbatches = 8,
       .checkpointing = "nothing_saveable"},
      {.example = "llama-3.1-8b",
       .mesh = "dp=2,fsdp=8,sp=2",
       .batch = 256,
       .microbatches = 4,
       .checkpointing = "checkpoint_dots_with_no_batch_dims",
       .dcn = "dp=2"},
      {.example = "mixtral-8x7b", .mesh = "fsdp=4,ep=2,tp=2", .batch = 8, .checkpointing = "dots_saveable"},
      {.example = "llama-3.1-8b", .mesh = "fsdp=8"},
  };
  for (const RuntimeCase& c : cases) {
    auto result = ExportCase("maxtext", c, /*json=*/true);
    ASSERT_TRUE(result.ok()) << c.example << " " << c.mesh << ": " << result.status().ToString();
    const Json doc = Json::parse(result->text);
    for (const auto& [key, value] : doc.items()) EXPECT_EQ(keys.count(key), 1u) << key;
    EXPECT_EQ(policies.count(doc["remat_policy"].get<std::string>()), 1u) << doc["remat_policy"];
  }
}

TEST(ExportMaxTextTest, TheMeshPipelineAndBatchKeys) {
  const std::string text = ExportText("maxtext", {.example = "llama-3.1-8b",
                                                  .mesh = "pp=4,fsdp=2,tp=2",
                                                  .schedule = "gpipe",
                                                  .batch = 64,
                                                  .seq = 4096,
                                                  .microbatches = 8,
                                                  .checkpointing = "nothing_saveable"});
  for (const char* line :
       {"ici_data_parallelism=1", "ici_pipeline_parallelism=4", "ici_fsdp_parallelism=2", "ici_tensor_parallelism=2",
        "dcn_data_parallelism=1", "dcn_fsdp_parallelism=1", "num_layers_per_pipeline_stage=8", "num_pipeline_repeats=1",
        "pipeline_parallel_layers=32", "num_pipeline_microbatches=8", "per_device_batch_size=4",
        "gradient_accumulation_steps=1", "max_target_length=4096", "remat_policy=full"}) {
    EXPECT_TRUE(HasArgLine(text, line)) << line << "\n" << text;
  }
  // --dcn dp=2 makes dp 2 within a slice and 2 across (64 devices); without a pipeline the microbatches are
  // gradient accumulation steps: 256 in 4 steps of 64, one per device.
  const std::string hybrid = ExportText("maxtext", {.example = "llama-3.1-8b",
                                                    .mesh = "dp=2,fsdp=8,sp=2",
                                                    .batch = 256,
                                                    .microbatches = 4,
                                                    .checkpointing = "checkpoint_dots_with_no_batch_dims",
                                                    .dcn = "dp=2"});
  for (const char* line :
       {"ici_data_parallelism=2", "dcn_data_parallelism=2", "ici_context_parallelism=2", "dcn_fsdp_parallelism=1",
        "per_device_batch_size=1", "gradient_accumulation_steps=4", "remat_policy=minimal"}) {
    EXPECT_TRUE(HasArgLine(hybrid, line)) << line << "\n" << hybrid;
  }
  // A fraction of a sequence per device, exactly: 4 sequences over 16 devices.
  EXPECT_TRUE(HasArgLine(ExportText("maxtext", {.example = "llama-3.1-8b", .mesh = "fsdp=16", .batch = 4}),
                         "per_device_batch_size=0.25"));
  // Nothing recomputed has no MaxText policy: the one saving most.
  EXPECT_TRUE(HasArgLine(
      ExportText("maxtext", {.example = "llama-3.1-8b", .mesh = "fsdp=8", .checkpointing = "everything_saveable"}),
      "remat_policy=minimal_with_context"));
}

TEST(ExportMaxTextTest, WhatMaxTextCannotRunIsRefusedWithTheReason) {
  EXPECT_EQ(ExportRefusal("maxtext", {.example = "llama-3.1-8b", .mesh = "pp=4"}),
            "--pp-schedule 1f1b: MaxText's pipeline runs every microbatch's forward, then the backward as its "
            "reverse (GPipe's order; src/maxtext/layers/pipeline.py), and has no 1f1b schedule");
  EXPECT_EQ(ExportRefusal("maxtext",
                          {.example = "llama-3.1-8b", .mesh = "pp=4", .schedule = "gpipe", .pp_layers = "9,9,8,6"}),
            "the stages hold 9,9,8,6 layers: MaxText gives every stage num_layers_per_pipeline_stage layers (its "
            "config asserts stages x num_pipeline_repeats x num_layers_per_pipeline_stage = the pipelined layers)");
  EXPECT_EQ(ExportRefusal("maxtext", {.example = "deepseek-v3", .mesh = "pp=2,ep=8", .schedule = "gpipe"}),
            "the model's first 3 layers are dense: MaxText pipelines only the MoE layers of such a model "
            "(pipeline_parallel_layers), and this plan puts every layer on a stage");
  EXPECT_EQ(
      ExportRefusal("maxtext", {.example = "llama-3.1-8b", .mesh = "pp=4", .schedule = "gpipe", .microbatches = 6}),
      "--microbatches 6 is not a multiple of the 4 pipeline stages: MaxText asserts num_pipeline_microbatches "
      "% stages == 0");
  EXPECT_NE(ExportRefusal("maxtext", {.example = "llama-3.1-8b", .mesh = "fsdp=8", .batch = 12, .microbatches = 8}),
            "");
  EXPECT_NE(
      ExportRefusal("maxtext", {.example = "llama-3.1-8b", .mesh = "fsdp=8", .checkpointing = "save_only_these_names"}),
      "");
}

TEST(ExportTorchPipelineTest, EachStageHoldsItsModulesAndItsTensorsLiveOnItsDevices) {
  auto result = ExportCase("torch", {.example = "llama-3.1-8b", .mesh = "pp=4,fsdp=2", .microbatches = 8});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const Json doc = Json::parse(result->text);
  const Json& pipeline = doc["pipeline"];
  EXPECT_EQ(pipeline["schedule"], "Schedule1F1B");
  EXPECT_EQ(pipeline["schedule_name"], "1F1B");
  EXPECT_EQ(pipeline["n_microbatches"], 8);
  EXPECT_EQ(PinnedList("torch_pipelining.yaml", "classes").count(pipeline["schedule"].get<std::string>()), 1u);
  const Json& parts = pipeline["module_fqns_per_model_part"];
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0][0], "model.embed_tokens");
  EXPECT_EQ(parts[3][parts[3].size() - 2], "model.norm");
  EXPECT_EQ(parts[3].back(), "lm_head");
  // Every layer once, in order, eight per stage.
  std::vector<std::string> layers;
  for (const Json& part : parts) {
    for (const Json& module : part) {
      if (module.get<std::string>().starts_with("model.layers.")) layers.push_back(module.get<std::string>());
    }
  }
  ASSERT_EQ(layers.size(), 32u);
  for (size_t i = 0; i < layers.size(); ++i) EXPECT_EQ(layers[i], "model.layers." + std::to_string(i));
  // pp=4 outermost over fsdp=2: stage s holds devices 2s and 2s+1, a mesh without pp.
  for (const Json& row : doc["params"]) {
    const int64_t stage = row["stage"].get<int64_t>();
    EXPECT_EQ(row["device_mesh"]["ranks"], Json(std::vector<int64_t>{2 * stage, 2 * stage + 1})) << row["name"];
    EXPECT_EQ(row["device_mesh"]["mesh_dim_names"], Json(std::vector<std::string>{"dp", "fsdp", "ep", "tp", "sp"}));
    if (row["name"].get<std::string>().starts_with("model.layers.9.")) {
      EXPECT_EQ(stage, 1);
    }
  }
}

// GPipe with virtual stages is MaxText's circular pipeline: layers wrap round the stages num_pipeline_repeats
// times (src/maxtext/layers/pipeline.py), and PyTorch's ScheduleLoopedBFS with stage c on rank c mod pp.
TEST(ExportRuntimeTest, CircularGpipeIsMaxTextsRepeatsAndTorchsLoopedBfs) {
  const RuntimeCase circular{.example = "llama-3.1-8b",
                             .mesh = "pp=4,fsdp=2",
                             .schedule = "gpipe",
                             .virtual_stages = 2,
                             .batch = 64,
                             .microbatches = 8};
  const std::string maxtext = ExportText("maxtext", circular);
  for (const char* line : {"num_layers_per_pipeline_stage=4", "num_pipeline_repeats=2", "pipeline_parallel_layers=32",
                           "num_pipeline_microbatches=8"}) {
    EXPECT_TRUE(HasArgLine(maxtext, line)) << line << "\n" << maxtext;
  }
  RuntimeCase stages_only = circular;
  stages_only.batch.reset();  // the step goes to Megatron and MaxText; torch takes the microbatches
  auto torch = ExportCase("torch", stages_only);
  ASSERT_TRUE(torch.ok()) << torch.status().ToString();
  const Json pipeline = Json::parse(torch->text)["pipeline"];
  EXPECT_EQ(pipeline["schedule"], "ScheduleLoopedBFS");
  EXPECT_EQ(pipeline["stages_per_rank"], 2);
  EXPECT_EQ(pipeline["stage_pp_ranks"], Json(std::vector<int64_t>{0, 1, 2, 3, 0, 1, 2, 3}));
  // Megatron-LM has no GPipe, circular or not.
  auto megatron = ExportCase("megatron", circular);
  ASSERT_FALSE(megatron.ok());
  EXPECT_NE(megatron.status().ToString().find("--pp-schedule gpipe"), std::string::npos)
      << megatron.status().ToString();
}

TEST(ExportTorchPipelineTest, InterleavedChunksLoopOverTheRanksAndTiedEmbeddingsSitOnBothEnds) {
  auto interleaved = ExportCase(
      "torch",
      {.example = "llama-3.1-8b", .mesh = "pp=4", .schedule = "interleaved", .virtual_stages = 2, .microbatches = 8});
  ASSERT_TRUE(interleaved.ok()) << interleaved.status().ToString();
  const Json pipeline = Json::parse(interleaved->text)["pipeline"];
  EXPECT_EQ(pipeline["schedule"], "ScheduleInterleaved1F1B");
  EXPECT_EQ(pipeline["stages_per_rank"], 2);
  EXPECT_EQ(pipeline["stage_pp_ranks"], Json(std::vector<int64_t>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(pipeline["module_fqns_per_model_part"][4][0], "model.layers.16");
  // A first stage that only embeds is a model part of the embedding alone.
  auto embed_alone = ExportCase("torch", {.example = "llama-3.1-8b", .mesh = "pp=4", .pp_layers = "0,11,11,10"});
  ASSERT_TRUE(embed_alone.ok()) << embed_alone.status().ToString();
  EXPECT_EQ(Json::parse(embed_alone->text)["pipeline"]["module_fqns_per_model_part"][0],
            Json(std::vector<std::string>{"model.embed_tokens"}));

  auto zero_bubble = ExportCase("torch", {.example = "llama-3.1-8b", .mesh = "pp=4", .schedule = "zero-bubble"});
  ASSERT_TRUE(zero_bubble.ok()) << zero_bubble.status().ToString();
  EXPECT_EQ(Json::parse(zero_bubble->text)["pipeline"]["schedule"], "ScheduleInterleavedZeroBubble");

  // gemma-2-9b ties its embeddings: the first stage looks rows up, the last runs the head, each on a copy.
  auto tied = ExportCase("torch", {.example = "gemma-2-9b", .mesh = "pp=2,fsdp=2"});
  ASSERT_TRUE(tied.ok()) << tied.status().ToString();
  const Json doc = Json::parse(tied->text);
  std::vector<int64_t> stages;
  for (const Json& row : doc["params"]) {
    if (row["name"] == "model.embed_tokens.weight") stages.push_back(row["stage"].get<int64_t>());
  }
  EXPECT_EQ(stages, (std::vector<int64_t>{0, 1}));
  const Json& parts = doc["pipeline"]["module_fqns_per_model_part"];
  EXPECT_EQ(parts[0][0], "model.embed_tokens");
  EXPECT_NE(std::find(parts[1].begin(), parts[1].end(), Json("model.embed_tokens")), parts[1].end()) << parts[1];

  EXPECT_NE(ExportRefusal("torch", {.example = "llama-3.1-8b", .mesh = "pp=4", .schedule = "dualpipe"})
                .find("ScheduleDualPipeV"),
            std::string::npos);
}

TEST(ExportPipelineTest, FormatsOfOneShardingPerTensorRefuseAPipelineAndTheStepOptions) {
  EXPECT_EQ(ExportRefusal("jax", {.example = "llama-3.1-8b", .mesh = "pp=4"}),
            "--mesh pp=4: --to jax gives each tensor one sharding over the whole mesh, and a pipelined tensor lives "
            "on its stage's devices only");
  EXPECT_EQ(ExportRefusal("xla-hlo", {.example = "llama-3.1-8b", .mesh = "fsdp=8", .batch = 8}),
            "--batch does not apply to --to xla-hlo");
  EXPECT_EQ(ExportRefusal("torch", {.example = "llama-3.1-8b", .mesh = "fsdp=8", .seq = 8}),
            "--seq does not apply to --to torch");
  auto json = ExportCase("json", {.example = "llama-3.1-8b", .mesh = "pp=4", .microbatches = 8});
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_TRUE(Json::parse(json->text).contains("pipeline"));
}

}  // namespace
}  // namespace easyplan::api
