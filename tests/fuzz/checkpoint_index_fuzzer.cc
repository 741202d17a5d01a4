// Fuzzes checkpoint index files (model.safetensors.index.json): ParseCheckpointIndex, and
// ReadCheckpoint on a directory holding the fuzzed index beside the two real shards of
// tests/fixtures/tree/ckpt-llama-sharded, so the cross-checks between index and shard headers run.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "core/checkpoint.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace easyplan;
  static const std::string kDir = EASYPLAN_SOURCE_DIR "/tests/fixtures/tree/ckpt-llama-sharded/";
  static const std::string kShard1 = Slurp(kDir + "model-00001-of-00002.safetensors");
  static const std::string kShard2 = Slurp(kDir + "model-00002-of-00002.safetensors");
  std::string text(reinterpret_cast<const char*>(data), size);
  Limits limits;
  limits.max_values = 100000;

  StatusOr<CheckpointIndex> index = ParseCheckpointIndex(text, "model.safetensors.index.json", limits);
  fuzz::CheckBadInput(index.status());
  if (index.ok() && index->total_size) fuzz::Check(*index->total_size >= 0, "negative total_size accepted");

  MemFileSystem fs;
  fs.AddFile("ckpt/model.safetensors.index.json", text);
  fs.AddFile("ckpt/model-00001-of-00002.safetensors", kShard1);
  fs.AddFile("ckpt/model-00002-of-00002.safetensors", kShard2);
  SafetensorsLimits st_limits;
  st_limits.document = limits;
  StatusOr<Checkpoint> checkpoint = ReadCheckpoint(fs, "ckpt", st_limits);
  fuzz::CheckBadInput(checkpoint.status());
  if (checkpoint.ok()) {
    fuzz::Check(index.ok(), "ReadCheckpoint accepted an index ParseCheckpointIndex refuses");
    fuzz::CheckBadInput(checkpoint->TotalBytes().status());
  }
  return 0;
}
