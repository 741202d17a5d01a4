#include "core/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/json.h"
#include "core/safetensors_test_util.h"
#include "tests/test_util.h"

namespace easyplan {
namespace {

using testing::MakeSafetensors;
using testing::RecordingFileSystem;

// ---------------------------------------------------------------------------------------------
// Test helpers

/// An index file mapping each (tensor, shard) pair, with an optional total_size.
std::string MakeIndex(const std::vector<std::pair<std::string, std::string>>& weight_map,
                      std::optional<int64_t> total_size = std::nullopt) {
  Json index = Json::object();
  index["metadata"] = Json::object();
  if (total_size) index["metadata"]["total_size"] = *total_size;
  index["weight_map"] = Json::object();
  for (const auto& [name, shard] : weight_map) index["weight_map"][name] = shard;
  return index.dump(2);
}

std::vector<std::string> Names(const Checkpoint& checkpoint) {
  std::vector<std::string> names;
  for (const CheckpointTensor& tensor : checkpoint.tensors) names.push_back(tensor.entry.name);
  return names;
}

/// A two-shard checkpoint in "ckpt/": index plus both shards.
MemFileSystem TwoShardCheckpoint() {
  MemFileSystem mem;
  mem.AddFile("ckpt/model.safetensors.index.json",
              MakeIndex({{"lm_head.weight", "model-00002-of-00002.safetensors"},
                         {"model.embed_tokens.weight", "model-00001-of-00002.safetensors"},
                         {"model.layers.0.mlp.down_proj.weight", "model-00001-of-00002.safetensors"},
                         {"model.norm.weight", "model-00002-of-00002.safetensors"}},
                        /*total_size=*/16 * 4 * 2 + 4 * 8 * 2 + 16 * 4 * 2 + 4 * 2));
  mem.AddFile("ckpt/model-00001-of-00002.safetensors",
              MakeSafetensors({{"model.embed_tokens.weight", "BF16", {16, 4}},
                               {"model.layers.0.mlp.down_proj.weight", "BF16", {4, 8}}}));
  mem.AddFile("ckpt/model-00002-of-00002.safetensors",
              MakeSafetensors({{"model.norm.weight", "BF16", {4}}, {"lm_head.weight", "BF16", {16, 4}}}));
  return mem;
}

Status CheckpointError(const FileSystem& fs, const std::string& path) {
  StatusOr<Checkpoint> checkpoint = ReadCheckpoint(fs, path);
  EXPECT_FALSE(checkpoint.ok());
  if (checkpoint.ok()) return Status::Internal("unexpectedly read");
  EXPECT_EQ(checkpoint.status().kind(), ErrorKind::kBadInput);
  return checkpoint.status();
}

Status IndexError(std::string_view text) {
  StatusOr<CheckpointIndex> index = ParseCheckpointIndex(text, "model.safetensors.index.json");
  EXPECT_FALSE(index.ok());
  if (index.ok()) return Status::Internal("unexpectedly parsed");
  EXPECT_EQ(index.status().kind(), ErrorKind::kBadInput);
  EXPECT_EQ(index.status().diag().loc.file, "model.safetensors.index.json");
  return index.status();
}

// ---------------------------------------------------------------------------------------------
// Index files

TEST(CheckpointTest, IndexWithoutShardsListsNamesOnlyAndRecordsMissingShards) {
  MemFileSystem mem;
  mem.AddFile("ckpt/model.safetensors.index.json", MakeIndex({{"b.weight", "model-00002-of-00002.safetensors"},
                                                              {"a.weight", "model-00001-of-00002.safetensors"},
                                                              {"c.weight", "model-00001-of-00002.safetensors"}},
                                                             1234));
  StatusOr<Checkpoint> checkpoint = ReadCheckpoint(mem, "ckpt/model.safetensors.index.json");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(checkpoint->source, "ckpt/model.safetensors.index.json");
  EXPECT_EQ(Names(*checkpoint), (std::vector<std::string>{"b.weight", "a.weight", "c.weight"}));
  EXPECT_EQ(checkpoint->tensors[0].shard, "model-00002-of-00002.safetensors");
  EXPECT_FALSE(checkpoint->tensors[0].has_metadata);
  EXPECT_FALSE(checkpoint->HasAllMetadata());
  EXPECT_EQ(checkpoint->index_total_size, 1234);
  EXPECT_EQ(checkpoint->missing_shards,
            (std::vector<std::string>{"model-00002-of-00002.safetensors", "model-00001-of-00002.safetensors"}));
  StatusOr<int64_t> bytes = checkpoint->TotalBytes();
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().diag().message,
            "tensor 'b.weight' has no shape or dtype: its shard 'model-00002-of-00002.safetensors' was not read");
}

TEST(CheckpointTest, IndexWithShardsCrossChecksHeadersAndFillsShapes) {
  MemFileSystem mem = TwoShardCheckpoint();
  StatusOr<Checkpoint> checkpoint = ReadCheckpoint(mem, "ckpt/model.safetensors.index.json");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(Names(*checkpoint), (std::vector<std::string>{"lm_head.weight", "model.embed_tokens.weight",
                                                          "model.layers.0.mlp.down_proj.weight", "model.norm.weight"}));
  EXPECT_TRUE(checkpoint->HasAllMetadata());
  EXPECT_TRUE(checkpoint->missing_shards.empty());
  const CheckpointTensor expected{TensorEntry{"model.layers.0.mlp.down_proj.weight", Shape{4, 8}, DType::kBFloat16},
                                  true, "model-00001-of-00002.safetensors"};
  EXPECT_EQ(checkpoint->tensors[2], expected);
  StatusOr<int64_t> bytes = checkpoint->TotalBytes();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, *checkpoint->index_total_size);
}

TEST(CheckpointTest, EachShardHeaderIsReadOnceAndTheIndexOnce) {
  MemFileSystem mem = TwoShardCheckpoint();
  RecordingFileSystem recording(mem);
  ASSERT_TRUE(ReadCheckpoint(recording, "ckpt/model.safetensors.index.json").ok());
  EXPECT_EQ(recording.whole_reads, std::vector<std::string>{"ckpt/model.safetensors.index.json"});
  EXPECT_EQ(recording.HeaderReads("ckpt/model-00001-of-00002.safetensors"), 1);
  EXPECT_EQ(recording.HeaderReads("ckpt/model-00002-of-00002.safetensors"), 1);
  EXPECT_EQ(recording.range_reads.size(), 4u);  // length prefix + header of each shard
}

TEST(CheckpointTest, PresentShardsGetShapesAndMissingOnesNamesOnly) {
  const MemFileSystem mem = TwoShardCheckpoint();
  MemFileSystem partial;  // the same checkpoint without its second shard
  partial.AddFile("ckpt/model.safetensors.index.json", *mem.ReadFile("ckpt/model.safetensors.index.json", 1 << 20));
  partial.AddFile("ckpt/model-00001-of-00002.safetensors",
                  *mem.ReadFile("ckpt/model-00001-of-00002.safetensors", 1 << 20));
  StatusOr<Checkpoint> checkpoint = ReadCheckpoint(partial, "ckpt/model.safetensors.index.json");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(checkpoint->missing_shards, std::vector<std::string>{"model-00002-of-00002.safetensors"});
  EXPECT_FALSE(checkpoint->tensors[0].has_metadata);  // lm_head.weight, in the missing shard
  EXPECT_TRUE(checkpoint->tensors[1].has_metadata);
  EXPECT_EQ(checkpoint->tensors[1].entry.shape, (Shape{16, 4}));
}

TEST(CheckpointTest, ShardMissingATensorTheIndexMapsToItIsAnError) {
  MemFileSystem mem = TwoShardCheckpoint();
  mem.AddFile("ckpt/model-00002-of-00002.safetensors", MakeSafetensors({{"model.norm.weight", "BF16", {4}}}));
  Status status = CheckpointError(mem, "ckpt");
  EXPECT_EQ(status.diag().message,
            "index maps 'lm_head.weight' to 'model-00002-of-00002.safetensors' but that shard has no such tensor");
  EXPECT_EQ(status.diag().loc.file, "ckpt/model.safetensors.index.json");
  EXPECT_EQ(status.diag().loc.pointer, "/weight_map/lm_head.weight");
}

TEST(CheckpointTest, ShardHoldingATensorTheIndexDoesNotListIsAnError) {
  MemFileSystem mem = TwoShardCheckpoint();
  mem.AddFile("ckpt/model-00002-of-00002.safetensors", MakeSafetensors({{"model.norm.weight", "BF16", {4}},
                                                                        {"lm_head.weight", "BF16", {16, 4}},
                                                                        {"model.rotary_emb.inv_freq", "F32", {2}}}));
  Status status = CheckpointError(mem, "ckpt/model.safetensors.index.json");
  EXPECT_EQ(status.diag().message,
            "shard 'model-00002-of-00002.safetensors' holds tensor 'model.rotary_emb.inv_freq', which the index "
            "'ckpt/model.safetensors.index.json' does not list");
  EXPECT_EQ(status.diag().loc.file, "ckpt/model-00002-of-00002.safetensors");
}

TEST(CheckpointTest, ShardHoldingATensorTheIndexMapsElsewhereIsAnError) {
  MemFileSystem mem = TwoShardCheckpoint();
  mem.AddFile("ckpt/model-00002-of-00002.safetensors",
              MakeSafetensors({{"model.norm.weight", "BF16", {4}},
                               {"lm_head.weight", "BF16", {16, 4}},
                               {"model.embed_tokens.weight", "BF16", {16, 4}}}));
  EXPECT_EQ(CheckpointError(mem, "ckpt/model.safetensors.index.json").diag().message,
            "shard 'model-00002-of-00002.safetensors' holds tensor 'model.embed_tokens.weight' but the index "
            "'ckpt/model.safetensors.index.json' maps it to 'model-00001-of-00002.safetensors'");
}

TEST(CheckpointTest, ShardHeaderErrorsNameTheShard) {
  MemFileSystem mem = TwoShardCheckpoint();
  mem.AddFile("ckpt/model-00001-of-00002.safetensors", "short");
  Status status = CheckpointError(mem, "ckpt/model.safetensors.index.json");
  EXPECT_EQ(status.diag().loc.file, "ckpt/model-00001-of-00002.safetensors");
}

TEST(CheckpointTest, PathTraversalInShardNamesIsRefused) {
  for (const std::string shard :
       {"../model.safetensors", "sub/model.safetensors", "/etc/passwd", "..", ".", "a\\..\\model.safetensors", ""}) {
    MemFileSystem mem;
    mem.AddFile("ckpt/model.safetensors.index.json", MakeIndex({{"w", shard}}));
    mem.AddFile("model.safetensors", MakeSafetensors({{"w", "F32", {1}}}));
    Status status = CheckpointError(mem, "ckpt/model.safetensors.index.json");
    EXPECT_EQ(status.diag().message,
              "weight_map maps 'w' to '" + shard + "', which is not a plain file name beside the index");
    EXPECT_EQ(status.diag().loc.pointer, "/weight_map/w");
  }
}

TEST(CheckpointTest, BinShardsAreNeverOpened) {
  MemFileSystem mem;
  mem.AddFile("ckpt/pytorch_model.bin.index.json",
              MakeIndex({{"a", "pytorch_model-00001-of-00002.bin"}, {"b", "pytorch_model-00002-of-00002.bin"}}, 99));
  mem.AddFile("ckpt/pytorch_model-00001-of-00002.bin", "not a pickle we would ever read");
  RecordingFileSystem recording(mem);
  StatusOr<Checkpoint> checkpoint = ReadCheckpoint(recording, "ckpt");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(checkpoint->source, "ckpt/pytorch_model.bin.index.json");
  EXPECT_EQ(Names(*checkpoint), (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(checkpoint->HasAllMetadata());
  EXPECT_EQ(checkpoint->missing_shards, std::vector<std::string>{"pytorch_model-00002-of-00002.bin"});
  EXPECT_FALSE(recording.Touched("ckpt/pytorch_model-00001-of-00002.bin"));
}

TEST(CheckpointTest, IndexIsSanityChecked) {
  EXPECT_EQ(IndexError("[1]").diag().message,
            "an index file must be a JSON object with a \"weight_map\", found array [1]");
  EXPECT_EQ(IndexError(R"({"metadata": {}})").diag().message, "missing \"weight_map\"");
  EXPECT_EQ(IndexError(R"({"weight_map": ["a"]})").diag().message,
            "weight_map must be an object mapping tensor names to shard files, found array [\"a\"]");
  Status not_string = IndexError("{\"weight_map\": {\n  \"a\": \"x.safetensors\",\n  \"b\": 3\n}}");
  EXPECT_EQ(not_string.diag().message, "weight_map maps 'b' to 3, expected a shard file name");
  EXPECT_EQ(not_string.diag().loc.pointer, "/weight_map/b");
  EXPECT_EQ(not_string.diag().loc.line, 3);
  EXPECT_EQ(IndexError(R"({"metadata": {"total_size": -1}, "weight_map": {}})").diag().message,
            "metadata.total_size must be a non-negative integer (bytes), found -1");
  EXPECT_EQ(IndexError(R"({"metadata": {"total_size": 1.5e10}, "weight_map": {}})").diag().message,
            "metadata.total_size must be a non-negative integer (bytes), found float 15000000000.0");
  EXPECT_EQ(IndexError(R"({"metadata": {"total_size": "12"}, "weight_map": {}})").diag().message,
            "metadata.total_size must be a non-negative integer (bytes), found string \"12\"");
  EXPECT_EQ(IndexError(R"({"metadata": 5, "weight_map": {}})").diag().message, "metadata must be an object, found 5");
  EXPECT_EQ(IndexError(R"({"weight_map": {"a": "x.safetensors", "a": "y.safetensors"}})").diag().message,
            "weight_map lists tensor 'a' more than once");
  EXPECT_TRUE(IndexError(R"({"weight_map": {)").diag().message.starts_with("invalid JSON: "));
}

TEST(CheckpointTest, IndexMetadataIsOptionalAndOtherKeysAreIgnored) {
  StatusOr<CheckpointIndex> bare = ParseCheckpointIndex(R"({"weight_map": {"a": "x.safetensors"}})", "i.json");
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_EQ(bare->total_size, std::nullopt);
  using Entry = std::pair<std::string, std::string>;
  EXPECT_EQ(bare->weight_map, (std::vector<Entry>{{"a", "x.safetensors"}}));
  StatusOr<CheckpointIndex> rich = ParseCheckpointIndex(
      R"({"metadata": {"total_size": 7, "total_parameters": 3, "format": "pt"}, "weight_map": {}})", "i.json");
  ASSERT_TRUE(rich.ok()) << rich.status().ToString();
  EXPECT_EQ(rich->total_size, 7);
  EXPECT_TRUE(rich->weight_map.empty());
}

TEST(CheckpointTest, IndexLargerThan64MiBIsRefusedBeforeReading) {
  MemFileSystem mem;
  mem.AddFile("big/model.safetensors.index.json", std::string(static_cast<size_t>(kMaxCheckpointIndexBytes) + 1, ' '));
  RecordingFileSystem recording(mem);
  Status status = CheckpointError(recording, "big");
  EXPECT_EQ(status.diag().message,
            "the index file is 67108865 bytes, more than the limit of 67108864 bytes (64 MiB) for index files");
  EXPECT_EQ(status.diag().loc.file, "big/model.safetensors.index.json");
  EXPECT_TRUE(recording.whole_reads.empty());
}

// ---------------------------------------------------------------------------------------------
// Files and directories

TEST(CheckpointTest, SingleSafetensorsFileIsReadInHeaderOrder) {
  MemFileSystem mem;
  mem.AddFile("m/model.safetensors", MakeSafetensors({{"z", "F32", {2}}, {"a", "F16", {3}}}));
  StatusOr<Checkpoint> checkpoint = ReadCheckpoint(mem, "m/model.safetensors");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(checkpoint->source, "m/model.safetensors");
  EXPECT_EQ(Names(*checkpoint), (std::vector<std::string>{"z", "a"}));
  EXPECT_EQ(checkpoint->tensors[1].shard, "model.safetensors");
  EXPECT_EQ(checkpoint->index_total_size, std::nullopt);
  EXPECT_EQ(*checkpoint->TotalBytes(), 14);
}

TEST(CheckpointTest, DirectoryPrefersTheSafetensorsIndex) {
  MemFileSystem mem = TwoShardCheckpoint();
  mem.AddFile("ckpt/model.safetensors", MakeSafetensors({{"other", "F32", {1}}}));
  mem.AddFile("ckpt/pytorch_model.bin.index.json", MakeIndex({{"bin", "pytorch_model.bin"}}));
  StatusOr<Checkpoint> checkpoint = ReadCheckpoint(mem, "ckpt");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(checkpoint->source, "ckpt/model.safetensors.index.json");
  EXPECT_EQ(checkpoint->tensors.size(), 4u);
}

TEST(CheckpointTest, DirectoryWithoutIndexPrefersModelSafetensors) {
  MemFileSystem mem;
  mem.AddFile("ckpt/model.safetensors", MakeSafetensors({{"w", "F32", {1}}}));
  mem.AddFile("ckpt/adapter.safetensors", MakeSafetensors({{"lora", "F32", {1}}}));
  mem.AddFile("ckpt/pytorch_model.bin.index.json", MakeIndex({{"bin", "pytorch_model.bin"}}));
  StatusOr<Checkpoint> checkpoint = ReadCheckpoint(mem, "ckpt/");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(checkpoint->source, "ckpt/model.safetensors");
  EXPECT_EQ(Names(*checkpoint), std::vector<std::string>{"w"});
}

TEST(CheckpointTest, DirectoryOfSafetensorsFilesIsMergedInFileNameOrder) {
  MemFileSystem mem;
  mem.AddFile("ckpt/b.safetensors", MakeSafetensors({{"b1", "F32", {1}}, {"b0", "F32", {1}}}));
  mem.AddFile("ckpt/a.safetensors", MakeSafetensors({{"a0", "F32", {1}}}));
  mem.AddFile("ckpt/pytorch_model.bin.index.json", MakeIndex({{"bin", "pytorch_model.bin"}}));
  StatusOr<Checkpoint> checkpoint = ReadCheckpoint(mem, "ckpt");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(checkpoint->source, "ckpt");
  EXPECT_EQ(Names(*checkpoint), (std::vector<std::string>{"a0", "b1", "b0"}));
  EXPECT_EQ(checkpoint->tensors[0].shard, "a.safetensors");
  EXPECT_EQ(checkpoint->tensors[2].shard, "b.safetensors");
  EXPECT_TRUE(checkpoint->HasAllMetadata());
}

TEST(CheckpointTest, TensorInTwoMergedFilesIsAnErrorNamingBoth) {
  MemFileSystem mem;
  mem.AddFile("ckpt/a.safetensors", MakeSafetensors({{"w", "F32", {1}}}));
  mem.AddFile("ckpt/b.safetensors", MakeSafetensors({{"v", "F32", {1}}, {"w", "F32", {1}}}));
  Status status = CheckpointError(mem, "ckpt");
  EXPECT_EQ(status.diag().message, "tensor 'w' appears in both 'a.safetensors' and 'b.safetensors'");
  EXPECT_EQ(status.diag().loc.file, "ckpt/b.safetensors");
}

TEST(CheckpointTest, DirectoryFallsBackToTheBinIndex) {
  MemFileSystem mem;
  mem.AddFile("ckpt/pytorch_model.bin.index.json", MakeIndex({{"bin", "pytorch_model.bin"}}));
  mem.AddFile("ckpt/config.json", "{}");
  StatusOr<Checkpoint> checkpoint = ReadCheckpoint(mem, "ckpt");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(checkpoint->source, "ckpt/pytorch_model.bin.index.json");
}

TEST(CheckpointTest, DirectoryWithoutACheckpointListsWhatWasLookedFor) {
  MemFileSystem mem;
  mem.AddFile("ckpt/config.json", "{}");
  mem.AddFile("ckpt/pytorch_model.bin.index.resaved-fp32.json", "{}");
  Status status = CheckpointError(mem, "ckpt");
  EXPECT_EQ(status.diag().message, "no checkpoint found in 'ckpt'");
  EXPECT_EQ(status.diag().notes,
            (std::vector<std::string>{"looked for model.safetensors.index.json, model.safetensors, *.safetensors and "
                                      "pytorch_model.bin.index.json",
                                      "found 'pytorch_model.bin.index.resaved-fp32.json': pass its path to read it as "
                                      "an index",
                                      "it holds config.json, a model config: its tree is `easyplan tree ckpt` (EasyDeL "
                                      "names) or `easyplan tree ckpt --layout hf` (HF names)"}));
}

TEST(CheckpointTest, OtherPathsAreErrors) {
  MemFileSystem mem;
  mem.AddFile("pytorch_model.bin", "x");
  EXPECT_EQ(CheckpointError(mem, "pytorch_model.bin").diag().message,
            "not a checkpoint: expected a .safetensors file, an index .json file or a directory");
  EXPECT_EQ(CheckpointError(mem, "nope").diag().message, "cannot read 'nope': No such file or directory");
  EXPECT_EQ(CheckpointError(mem, "nope.safetensors").diag().message,
            "cannot read 'nope.safetensors': No such file or directory");
  EXPECT_EQ(CheckpointError(mem, "nope.json").diag().message, "cannot read 'nope.json': No such file or directory");
}

TEST(CheckpointTest, RealFileSystemDirectoryWithIndexAndShards) {
  std::string pattern = (std::filesystem::temp_directory_path() / "easyplan_ckpt_test_XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const MemFileSystem mem = TwoShardCheckpoint();
  const StatusOr<std::vector<std::string>> names = mem.ListFiles("ckpt");
  ASSERT_TRUE(names.ok());
  for (const std::string& name : *names) {
    std::ofstream out(pattern + "/" + name, std::ios::binary);
    out << *mem.ReadFile("ckpt/" + name, 1 << 20);
  }
  RealFileSystem real;
  StatusOr<Checkpoint> checkpoint = ReadCheckpoint(real, pattern);
  std::filesystem::remove_all(pattern);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(checkpoint->source, pattern + "/model.safetensors.index.json");
  EXPECT_TRUE(checkpoint->HasAllMetadata());
  EXPECT_EQ(*checkpoint->TotalBytes(), *checkpoint->index_total_size);
}

// ---------------------------------------------------------------------------------------------
// The shared corpus of real index files (skipped when absent)

TEST(CheckpointTest, CorpusIndexFilesListEveryTensorByName) {
  const std::string corpus = testing::CorpusDir();
  EASYPLAN_SKIP_WITHOUT_CORPUS();
  const std::vector<std::tuple<std::string, size_t, size_t>> cases = {
      {"mistralai-Mixtral-8x7B-v0.1/model.safetensors.index.json", 995, 19},
      {"microsoft-Phi-3-mini-4k-instruct/model.safetensors.index.json", 195, 2},
      {"google-gemma-2-9b-it/model.safetensors.index.json", 464, 4},
      {"google-gemma-2b-it/model.safetensors.index.json", 164, 2},
      {"meta-llama-Llama-2-7b-hf/pytorch_model.bin.index.resaved-fp32.json", 323, 3},
  };
  RealFileSystem real;
  for (const auto& [file, tensors, shards] : cases) {
    const std::string path = corpus + "/" + file;
    if (!real.Exists(path)) {
      ADD_FAILURE() << "corpus file missing: " << path;
      continue;
    }
    StatusOr<Checkpoint> checkpoint = ReadCheckpoint(real, path);
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
    EXPECT_EQ(checkpoint->tensors.size(), tensors) << file;
    EXPECT_EQ(checkpoint->missing_shards.size(), shards) << file;  // the corpus holds no weights
    ASSERT_TRUE(checkpoint->index_total_size.has_value()) << file;
    EXPECT_GT(*checkpoint->index_total_size, 0) << file;
    EXPECT_FALSE(checkpoint->HasAllMetadata()) << file;
  }
}

TEST(CheckpointTest, CorpusDirectoriesAreFoundByDiscovery) {
  const std::string corpus = testing::CorpusDir();
  EASYPLAN_SKIP_WITHOUT_CORPUS();
  RealFileSystem real;
  const std::string gemma = corpus + "/google-gemma-2b-it";
  if (!real.IsDirectory(gemma)) GTEST_SKIP() << "no " << gemma;
  StatusOr<Checkpoint> checkpoint = ReadCheckpoint(real, gemma);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  EXPECT_EQ(checkpoint->source, gemma + "/model.safetensors.index.json");
  EXPECT_EQ(checkpoint->tensors.size(), 164u);
  // The Llama-2 folder holds only a re-saved index under a non-standard name: not discovered, but named.
  const std::string llama = corpus + "/meta-llama-Llama-2-7b-hf";
  if (!real.IsDirectory(llama)) return;
  StatusOr<Checkpoint> none = ReadCheckpoint(real, llama);
  ASSERT_FALSE(none.ok());
  ASSERT_EQ(none.status().diag().notes.size(), 3u);  // looked for, found, and its config.json
  EXPECT_EQ(none.status().diag().notes[1],
            "found 'pytorch_model.bin.index.resaved-fp32.json': pass its path to read it as an index");
}

}  // namespace
}  // namespace easyplan
