#include "core/safetensors.h"

#include <algorithm>
#include <array>
#include <utility>

#include "core/checked_math.h"
#include "core/did_you_mean.h"
#include "core/document.h"
#include "core/json.h"
#include "core/json_parse.h"
#include "core/json_pointer.h"

namespace easyplan {
namespace {

/// One dtype string of the format, with its element width in bits as the official Dtype::bitsize
/// gives it, and our DType (none for the 6-bit floats).
struct SafetensorsDType {
  std::string_view name;
  std::optional<DType> dtype;
  int bits;
};

// The order of safetensors/src/tensor.rs `enum Dtype` (increasing alignment).
constexpr std::array<SafetensorsDType, 20> kSafetensorsDTypes = {{
    {"BOOL", DType::kBool, 8},
    {"F4", DType::kFloat4E2M1FN, 4},
    {"F6_E2M3", std::nullopt, 6},
    {"F6_E3M2", std::nullopt, 6},
    {"U8", DType::kUInt8, 8},
    {"I8", DType::kInt8, 8},
    {"F8_E5M2", DType::kFloat8E5M2, 8},
    {"F8_E4M3", DType::kFloat8E4M3FN, 8},
    {"F8_E8M0", DType::kFloat8E8M0FNU, 8},
    {"I16", DType::kInt16, 16},
    {"U16", DType::kUInt16, 16},
    {"F16", DType::kFloat16, 16},
    {"BF16", DType::kBFloat16, 16},
    {"I32", DType::kInt32, 32},
    {"U32", DType::kUInt32, 32},
    {"F32", DType::kFloat32, 32},
    {"C64", DType::kComplex64, 64},
    {"F64", DType::kFloat64, 64},
    {"I64", DType::kInt64, 64},
    {"U64", DType::kUInt64, 64},
}};

constexpr std::array<std::string_view, kSafetensorsDTypes.size()> kSafetensorsDTypeNames = [] {
  std::array<std::string_view, kSafetensorsDTypes.size()> names{};
  for (size_t i = 0; i < kSafetensorsDTypes.size(); ++i) names[i] = kSafetensorsDTypes[i].name;
  return names;
}();

constexpr std::string_view kMetadataKey = "__metadata__";

const SafetensorsDType* FindDType(std::string_view name) {
  for (const SafetensorsDType& entry : kSafetensorsDTypes) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

class HeaderParser {
 public:
  HeaderParser(const std::string& path, int64_t data_bytes, const SafetensorsLimits& limits)
      : path_(path), data_bytes_(data_bytes), limits_(limits) {}

  StatusOr<SafetensorsHeader> Parse(std::string_view header_json) {
    if (static_cast<int64_t>(header_json.size()) > limits_.max_header_bytes) {
      return Error("", "the header is " + std::to_string(header_json.size()) + " bytes, more than the limit of " +
                           std::to_string(limits_.max_header_bytes));
    }
    StatusOr<Document> document = ParseJsonDocument(header_json, path_, limits_.document);
    if (!document.ok()) {
      Status status = document.status();
      if (status.diag().loc.line > 0) {
        status.mutable_diag().notes.push_back(
            "line:column count from the start of the JSON header, which begins at byte 8 of the file");
      }
      return status;
    }
    if (!document->duplicate_keys().empty()) return DuplicateKeyError(document->duplicate_keys().front());
    const Json& root = document->root();
    if (!root.is_object()) {
      return Error("",
                   "the header must be a JSON object mapping tensor names to their dtype, shape and "
                   "data_offsets, found " +
                       DescribeFound(root));
    }
    const int64_t tensor_count = static_cast<int64_t>(root.size()) - (root.contains(kMetadataKey) ? 1 : 0);
    if (tensor_count > limits_.max_tensors) {
      return Error("", "the header lists " + std::to_string(tensor_count) + " tensors, more than the limit of " +
                           std::to_string(limits_.max_tensors));
    }

    SafetensorsHeader header;
    header.data_bytes = data_bytes_;
    std::vector<Placed> placed;
    placed.reserve(static_cast<size_t>(tensor_count));
    for (auto it = root.begin(); it != root.end(); ++it) {
      if (it.key() == kMetadataKey) {
        EP_RETURN_IF_ERROR(ParseMetadata(it.value(), &header.metadata));
        continue;
      }
      EP_ASSIGN_OR_RETURN(Placed tensor, ParseTensor(it.key(), it.value()));
      placed.push_back(std::move(tensor));
    }
    EP_RETURN_IF_ERROR(CheckTiling(&placed));
    header.tensors.reserve(placed.size());
    for (Placed& tensor : placed) header.tensors.push_back(std::move(tensor.entry));
    return header;
  }

 private:
  /// A tensor and where its bytes lie in the data buffer.
  struct Placed {
    TensorEntry entry;
    int64_t begin = 0;
    int64_t end = 0;
  };

  Status Error(std::string pointer, std::string message, std::vector<std::string> notes = {}) const {
    return Status::BadInput(SourceLoc{path_, std::move(pointer), 0, 0}, std::move(message), std::move(notes));
  }

  Status TensorError(const std::string& name, std::string_view field, const std::string& message,
                     std::vector<std::string> notes = {}) const {
    std::string pointer = PointerToMember("", name);
    if (!field.empty()) pointer += "/" + std::string(field);  // a pointer below the entry: "shape/1"
    return Error(std::move(pointer), "tensor '" + name + "': " + message, std::move(notes));
  }

  Status DuplicateKeyError(const std::string& pointer) const {
    const std::vector<std::string> keys = SplitPointer(pointer);
    if (keys.size() == 1) {
      const std::string what = keys[0] == kMetadataKey ? "'__metadata__'" : "tensor name '" + keys[0] + "'";
      return Error(pointer, what + " appears more than once in the header");
    }
    std::string where = keys.size() == 2 && keys[0] == kMetadataKey ? "__metadata__" : "tensor '" + keys[0] + "'";
    return Error(pointer, where + ": key '" + keys.back() + "' appears more than once");
  }

  Status ParseMetadata(const Json& value, std::map<std::string, std::string>* metadata) const {
    const std::string pointer = PointerToMember("", kMetadataKey);
    if (value.is_null()) return Status();  // the official loader reads it as Option<...>
    if (!value.is_object()) {
      return Error(pointer, "__metadata__ must be an object of strings, found " + DescribeFound(value));
    }
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!it.value().is_string()) {
        return Error(PointerToMember(pointer, it.key()),
                     "__metadata__ key '" + it.key() + "' must hold a string, found " + DescribeFound(it.value()));
      }
      (*metadata)[it.key()] = it.value().get<std::string>();
    }
    return Status();
  }

  StatusOr<Placed> ParseTensor(const std::string& name, const Json& value) const {
    if (!value.is_object()) {
      return TensorError(name, "",
                         "expected an object with dtype, shape and data_offsets, found " + DescribeFound(value));
    }
    for (const char* field : {"dtype", "shape", "data_offsets"}) {
      if (!value.contains(field)) return TensorError(name, "", "missing '" + std::string(field) + "'");
    }
    Placed tensor;
    tensor.entry.name = name;

    // dtype
    const Json& dtype_value = value.at("dtype");
    if (!dtype_value.is_string()) {
      return TensorError(name, "dtype", "dtype must be a string such as \"BF16\", found " + DescribeFound(dtype_value));
    }
    const std::string dtype_name = dtype_value.get<std::string>();
    const SafetensorsDType* dtype = FindDType(dtype_name);
    if (dtype == nullptr) {
      const std::vector<std::string> names(kSafetensorsDTypeNames.begin(), kSafetensorsDTypeNames.end());
      std::vector<std::string> notes;
      if (auto suggestion = SuggestClosest(dtype_name, names)) notes.push_back("did you mean '" + *suggestion + "'?");
      notes.push_back("expected one of " + JoinQuoted(names));
      return TensorError(name, "dtype", "unknown safetensors dtype '" + dtype_name + "'", std::move(notes));
    }
    if (!dtype->dtype.has_value()) {
      return TensorError(name, "dtype",
                         "safetensors dtype '" + dtype_name + "' is not supported: easyplan has no " +
                             std::to_string(dtype->bits) + "-bit float type");
    }
    tensor.entry.dtype = *dtype->dtype;

    // shape
    const Json& shape_value = value.at("shape");
    if (!shape_value.is_array()) {
      return TensorError(name, "shape",
                         "shape must be an array of non-negative integers, found " + DescribeFound(shape_value));
    }
    std::vector<int64_t> dims;
    dims.reserve(shape_value.size());
    for (size_t i = 0; i < shape_value.size(); ++i) {
      const Json& dim = shape_value[i];
      if (!dim.is_number_integer() || dim.get<int64_t>() < 0) {
        return TensorError(
            name, PointerToElement("shape", i),
            "shape[" + std::to_string(i) + "] must be a non-negative integer, found " + DescribeFound(dim));
      }
      dims.push_back(dim.get<int64_t>());
    }
    tensor.entry.shape = Shape(std::move(dims));
    const Shape& shape = tensor.entry.shape;  // rendered only in messages
    const std::optional<int64_t> elements = tensor.entry.shape.NumElements();
    if (!elements) {
      return TensorError(name, "shape", "shape " + shape.ToString() + " has more elements than fit in 64 bits");
    }
    const std::optional<int64_t> bits = CheckedMul(*elements, dtype->bits);
    if (!bits) {
      return TensorError(name, "shape",
                         "shape " + shape.ToString() + " of " + dtype_name + " has more bytes than fit in 64 bits");
    }
    if (*bits % 8 != 0) {
      return TensorError(name, "shape",
                         "shape " + shape.ToString() + " of " + dtype_name + " is " + std::to_string(*bits) +
                             " bits, which is not a whole number of bytes");
    }
    const int64_t needed = *bits / 8;

    // data_offsets
    const Json& offsets = value.at("data_offsets");
    const bool well_formed = offsets.is_array() && offsets.size() == 2 && offsets[0].is_number_integer() &&
                             offsets[1].is_number_integer() && offsets[0].get<int64_t>() >= 0 &&
                             offsets[1].get<int64_t>() >= 0;
    if (!well_formed) {
      return TensorError(
          name, "data_offsets",
          "data_offsets must be [begin, end] with non-negative integers, found " + DescribeFound(offsets));
    }
    tensor.begin = offsets[0].get<int64_t>();
    tensor.end = offsets[1].get<int64_t>();
    if (tensor.end < tensor.begin) {
      return TensorError(name, "data_offsets", "data_offsets " + RangeText(tensor) + " end before they begin");
    }
    const int64_t held = tensor.end - tensor.begin;
    if (held != needed) {
      return TensorError(name, "data_offsets",
                         "data_offsets " + RangeText(tensor) + " hold " + std::to_string(held) + " bytes but shape " +
                             shape.ToString() + " of " + dtype_name + " needs " + std::to_string(needed));
    }
    if (tensor.end > data_bytes_) {
      return TensorError(name, "data_offsets",
                         "data_offsets " + RangeText(tensor) + " reach past the end of the data buffer, which holds " +
                             std::to_string(data_bytes_) + " bytes after the header");
    }
    return tensor;
  }

  static std::string RangeText(const Placed& tensor) {
    return "[" + std::to_string(tensor.begin) + ", " + std::to_string(tensor.end) + "]";
  }

  /// Sorts by offsets and checks that the tensors cover the data buffer exactly, without gaps or
  /// overlaps (the official Metadata::validate plus its "buffer fully covered" check).
  Status CheckTiling(std::vector<Placed>* placed) const {
    std::stable_sort(placed->begin(), placed->end(), [](const Placed& a, const Placed& b) {
      return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
    });
    int64_t covered = 0;
    const Placed* previous = nullptr;
    for (const Placed& tensor : *placed) {
      const std::string& name = tensor.entry.name;
      if (tensor.begin > covered) {
        const std::string gap = "[" + std::to_string(covered) + ", " + std::to_string(tensor.begin) + ")";
        const std::string after =
            previous == nullptr ? "at the start of the data buffer" : "after '" + previous->entry.name + "'";
        return TensorError(name, "data_offsets",
                           "data_offsets " + RangeText(tensor) + " leave bytes " + gap + " unused " + after,
                           {"the tensors must cover the data buffer exactly, each beginning where the previous "
                            "one ends"});
      }
      if (tensor.begin < covered) {
        return TensorError(name, "data_offsets",
                           "data_offsets " + RangeText(tensor) + " overlap those of '" + previous->entry.name + "', " +
                               RangeText(*previous));
      }
      covered = tensor.end;
      previous = &tensor;
    }
    if (covered != data_bytes_) {
      const std::string what = previous == nullptr
                                   ? "the header lists no tensors"
                                   : "the tensors end at byte " + std::to_string(covered) + " of the data buffer";
      return Error("", what + " but the data buffer holds " + std::to_string(data_bytes_) +
                           " bytes: " + std::to_string(data_bytes_ - covered) + " trailing bytes belong to no tensor");
    }
    return Status();
  }

  const std::string& path_;
  const int64_t data_bytes_;
  const SafetensorsLimits& limits_;
};

}  // namespace

std::span<const std::string_view> AllSafetensorsDTypeNames() { return kSafetensorsDTypeNames; }

std::optional<DType> DTypeFromSafetensors(std::string_view name) {
  const SafetensorsDType* entry = FindDType(name);
  return entry == nullptr ? std::nullopt : entry->dtype;
}

StatusOr<SafetensorsHeader> ParseSafetensorsHeader(std::string_view header_json, int64_t data_bytes,
                                                   const std::string& path_for_messages,
                                                   const SafetensorsLimits& limits) {
  if (data_bytes < 0) return Status::Internal("ParseSafetensorsHeader: negative data_bytes");
  return HeaderParser(path_for_messages, data_bytes, limits).Parse(header_json);
}

StatusOr<SafetensorsHeader> ReadSafetensorsHeader(const FileSystem& fs, const std::string& path,
                                                  const SafetensorsLimits& limits) {
  constexpr int64_t kLengthBytes = 8;
  const SourceLoc loc{path, "", 0, 0};
  EP_ASSIGN_OR_RETURN(const int64_t file_bytes, fs.FileSize(path));
  if (file_bytes < kLengthBytes) {
    return Status::BadInput(loc, "the file is " + std::to_string(file_bytes) +
                                     " bytes, too short for a safetensors file, which starts with an 8-byte "
                                     "header length");
  }
  EP_ASSIGN_OR_RETURN(const std::string prefix, fs.ReadFileRange(path, 0, kLengthBytes));
  uint64_t header_bytes = 0;
  for (int i = kLengthBytes - 1; i >= 0; --i) {
    header_bytes = (header_bytes << 8) | static_cast<unsigned char>(prefix[static_cast<size_t>(i)]);
  }
  // Both checks come before the header is read, so a corrupt length never becomes an allocation.
  const uint64_t rest = static_cast<uint64_t>(file_bytes - kLengthBytes);
  if (header_bytes > rest) {
    return Status::BadInput(loc,
                            "the header length is " + std::to_string(header_bytes) + " bytes but only " +
                                std::to_string(rest) + " bytes follow it",
                            {"the first 8 bytes of a safetensors file are the little-endian length of its JSON "
                             "header; the file is truncated or not a safetensors file"});
  }
  if (header_bytes > static_cast<uint64_t>(limits.max_header_bytes)) {
    return Status::BadInput(loc, "the header length is " + std::to_string(header_bytes) +
                                     " bytes, more than the limit of " + std::to_string(limits.max_header_bytes));
  }
  const int64_t header_length = static_cast<int64_t>(header_bytes);
  EP_ASSIGN_OR_RETURN(const std::string header_json, fs.ReadFileRange(path, kLengthBytes, header_length));
  return ParseSafetensorsHeader(header_json, file_bytes - kLengthBytes - header_length, path, limits);
}

}  // namespace easyplan
