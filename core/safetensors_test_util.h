#ifndef EASYPLAN_CORE_SAFETENSORS_TEST_UTIL_H_
#define EASYPLAN_CORE_SAFETENSORS_TEST_UTIL_H_

// Test helpers shared by core/safetensors_test.cc and core/checkpoint_test.cc: safetensors files built
// in memory, and a FileSystem that records what was read.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/dtype.h"
#include "core/file_system.h"
#include "core/json.h"

namespace easyplan::testing {

/// One tensor of a test file: safetensors dtype string and shape.
struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
};

/// The 8-byte little-endian header length.
inline std::string LengthPrefix(uint64_t length) {
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[static_cast<size_t>(i)] = static_cast<char>((length >> (8 * i)) & 0xff);
  return prefix;
}

/// A file with the given header text (used verbatim) followed by `data_bytes` zero bytes.
inline std::string RawSafetensors(std::string_view header, int64_t data_bytes) {
  return LengthPrefix(header.size()) + std::string(header) + std::string(static_cast<size_t>(data_bytes), '\0');
}

/// A well-formed safetensors file holding `tensors` back to back (zero bytes), as the official
/// writer lays it out: optional __metadata__ first, header padded with spaces to a multiple of 8.
inline std::string MakeSafetensors(const std::vector<TensorSpec>& tensors,
                                   const std::map<std::string, std::string>& metadata = {}) {
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  int64_t offset = 0;
  for (const TensorSpec& tensor : tensors) {
    int64_t elements = 1;
    for (int64_t dim : tensor.shape) elements *= dim;
    const int64_t bytes = elements * DTypeBits(*DTypeFromSafetensors(tensor.dtype)) / 8;
    header[tensor.name] = {
        {"dtype", tensor.dtype}, {"shape", tensor.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');
  return RawSafetensors(text, offset);
}

/// Forwards to another FileSystem and records every read.
class RecordingFileSystem final : public FileSystem {
 public:
  explicit RecordingFileSystem(const FileSystem& base) : base_(base) {}

  StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes) const override {
    whole_reads.push_back(path);
    return base_.ReadFile(path, max_bytes);
  }
  StatusOr<int64_t> FileSize(const std::string& path) const override { return base_.FileSize(path); }
  StatusOr<std::string> ReadFileRange(const std::string& path, int64_t offset, int64_t length) const override {
    range_reads.emplace_back(path, offset, length);
    return base_.ReadFileRange(path, offset, length);
  }
  bool IsDirectory(const std::string& path) const override { return base_.IsDirectory(path); }
  bool Exists(const std::string& path) const override { return base_.Exists(path); }
  StatusOr<std::vector<std::string>> ListFiles(const std::string& dir) const override { return base_.ListFiles(dir); }
  StatusOr<std::unique_ptr<StagedFile>> StageFile(const std::string&, std::string_view) override {
    return Status::Internal("RecordingFileSystem is read-only");
  }

  /// How many times the 8-byte length prefix of `path` was read (once per header read).
  int HeaderReads(const std::string& path) const {
    int count = 0;
    for (const auto& [read_path, offset, length] : range_reads) count += read_path == path && offset == 0 ? 1 : 0;
    return count;
  }
  /// Whether any byte of `path` was read.
  bool Touched(const std::string& path) const {
    for (const std::string& read : whole_reads) {
      if (read == path) return true;
    }
    for (const auto& [read_path, offset, length] : range_reads) {
      if (read_path == path) return true;
    }
    return false;
  }

  mutable std::vector<std::string> whole_reads;
  mutable std::vector<std::tuple<std::string, int64_t, int64_t>> range_reads;

 private:
  const FileSystem& base_;
};

}  // namespace easyplan::testing

#endif  // EASYPLAN_CORE_SAFETENSORS_TEST_UTIL_H_
