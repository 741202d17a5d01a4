#include "tests/test_util.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/status.h"

namespace easyplan::testing {

std::string SourceDir() { return std::filesystem::current_path().string(); }

namespace {

// Where the corpus would be: EASYPLAN_CORPUS_DIR, else the build's default (CMake's EASYPLAN_CORPUS_DIR).
std::string CorpusPathGiven() {
  const char* dir = std::getenv("EASYPLAN_CORPUS_DIR");
#ifdef EASYPLAN_DEFAULT_CORPUS_DIR
  if (dir == nullptr) dir = EASYPLAN_DEFAULT_CORPUS_DIR;
#endif
  return dir == nullptr ? "" : dir;
}

// Where the families' corpus would be: EASYPLAN_CORPUS_FAMILIES_DIR, else the corpus's "-families" sibling.
std::string CorpusFamiliesPathGiven() {
  if (const char* given = std::getenv("EASYPLAN_CORPUS_FAMILIES_DIR")) return given;
  const std::string corpus = CorpusDir();
  return corpus.empty() ? "" : corpus + "-families";
}

}  // namespace

std::string CorpusDir() {
  const std::string dir = CorpusPathGiven();
  if (dir.empty() || !std::filesystem::is_directory(dir)) return "";
  return std::filesystem::canonical(dir).string();
}

std::string TestNameOf(std::string text) {
  for (char& c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return text;
}

std::string CorpusAbsentReason() {
  if (!CorpusDir().empty()) return "";
  return "the corpus of real configs is absent (EASYPLAN_CORPUS_DIR, here '" + CorpusPathGiven() +
         "', is not a directory)";
}

std::string CorpusFamiliesAbsentReason() {
  if (!CorpusFamiliesDir().empty()) return "";
  if (std::getenv("EASYPLAN_CORPUS_FAMILIES_DIR") == nullptr && !CorpusAbsentReason().empty()) {
    return CorpusAbsentReason();  // the one cause
  }
  return "the corpus of the issue-20 families is absent (EASYPLAN_CORPUS_FAMILIES_DIR, here '" +
         CorpusFamiliesPathGiven() + "', is not a directory)";
}

std::string CorpusFamiliesDir() {
  const std::string dir = CorpusFamiliesPathGiven();
  if (dir.empty() || !std::filesystem::is_directory(dir)) return "";
  return std::filesystem::canonical(dir).string();
}

std::string ReadTestFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EP_CHECK(in.good(), "cannot open test file " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string> CorpusModels() {
  const std::string dir = CorpusDir();
  if (dir.empty()) return {""};
  std::vector<std::string> models;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "config.json")) {
      models.push_back(entry.path().filename().string());
    }
  }
  std::sort(models.begin(), models.end());
  return models;
}

Json DefaultPartitionAxis() {
  return Json::parse(R"({
    "data_parallel_axis": "dp", "fully_sharded_data_parallel_axis": "fsdp", "tensor_parallel_axis": "tp",
    "sequence_parallel_axis": "sp", "expert_parallel_axis": "ep", "batch_axis": ["fsdp", "dp"],
    "sequence_axis": "sp", "query_sequence_axis": "sp", "head_axis": "tp", "kv_head_axis": "tp",
    "key_sequence_axis": "sp", "hidden_state_axis": "tp", "mlp_intermediate_axis": "tp", "vocab_axis": "tp",
    "expert_axis": "ep", "expert_gate_axis": null, "attention_dim_axis": null, "attention_kv_dim_axis": null,
    "bias_head_sequence_axis": null, "bias_key_sequence_axis": null, "decode_batch_axis": ["fsdp", "dp"],
    "decode_query_sequence_axis": null, "decode_head_axis": "tp", "decode_kv_head_axis": "tp",
    "decode_key_sequence_axis": "sp", "decode_attention_dim_axis": null, "decode_attention_kv_dim_axis": null
  })");
}

}  // namespace easyplan::testing
