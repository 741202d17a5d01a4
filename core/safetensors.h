#ifndef EASYPLAN_CORE_SAFETENSORS_H_
#define EASYPLAN_CORE_SAFETENSORS_H_

// The header of a safetensors file, read without touching the weights. The format (Hugging Face
// safetensors): an 8-byte little-endian u64 N, then N bytes of UTF-8 JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (offsets into the byte buffer after the header),
// plus an optional "__metadata__" object of strings, then the byte buffer itself. The checks are
// those of the official loader (safetensors/src/tensor.rs): the header fits in the file and under
// 100 MB, the offsets tile the buffer exactly, and each tensor's byte length is its element count
// times its dtype size. Duplicate keys, which that loader lets the last one win, are errors here.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/file_system.h"
#include "core/limits.h"
#include "core/param_tree.h"
#include "core/status.h"

namespace easyplan {

/// Guards against corrupt or hostile files. max_header_bytes is the official loader's limit; the
/// header JSON (and an index file's) is parsed under `document`, whose max_values allows about
/// 125,000 tensors in one file by default (a tensor's entry is about 8 JSON values).
struct SafetensorsLimits {
  int64_t max_header_bytes = 100'000'000;  ///< the official MAX_HEADER_SIZE
  int64_t max_tensors = 10'000'000;
  Limits document;  ///< nesting depth and value count of the JSON text
};

/// What a safetensors header says.
struct SafetensorsHeader {
  /// In data-offset order. `role` is always kParameter: a file does not say what a tensor is.
  std::vector<TensorEntry> tensors;
  std::map<std::string, std::string> metadata;  ///< "__metadata__", e.g. {"format": "pt"}
  int64_t data_bytes = 0;                       ///< size of the byte buffer after the header
};

/// Reads the 8-byte length and the JSON header of the safetensors file at `path` with two
/// FileSystem::ReadFileRange calls; the claimed length is checked against the file size and the
/// limit before anything is read, and the weights are never read. Every error is BadInput naming the
/// file (and, for a tensor, the tensor plus what was expected and found), e.g. "tensor
/// 'model.norm.weight': data_offsets [0, 10] hold 10 bytes but shape [4096] of BF16 needs 8192".
StatusOr<SafetensorsHeader> ReadSafetensorsHeader(const FileSystem& fs, const std::string& path,
                                                  const SafetensorsLimits& limits = {});

/// Parses and validates header JSON whose byte buffer holds `data_bytes` bytes (for tests and for
/// callers that already hold the bytes). Messages name `path_for_messages`; a JSON syntax error's
/// line:column counts from the start of the header text.
StatusOr<SafetensorsHeader> ParseSafetensorsHeader(std::string_view header_json, int64_t data_bytes,
                                                   const std::string& path_for_messages,
                                                   const SafetensorsLimits& limits = {});

/// Every dtype string of the format ("BOOL", "F4", "F6_E2M3", ..., "U64"), in the order of its Dtype
/// enum, including the ones easyplan has no DType for.
std::span<const std::string_view> AllSafetensorsDTypeNames();

/// Our DType for a safetensors dtype string: "BF16" -> kBFloat16, "F8_E4M3" -> kFloat8E4M3FN (torch
/// float8_e4m3fn), "F8_E8M0" -> kFloat8E8M0FNU, "F4" -> kFloat4E2M1FN, "C64" -> kComplex64.
/// nullopt for unknown strings and for F6_E2M3 / F6_E3M2, which have no DType.
std::optional<DType> DTypeFromSafetensors(std::string_view name);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_SAFETENSORS_H_
