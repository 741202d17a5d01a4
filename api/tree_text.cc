#include "api/tree_text.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/human.h"

namespace easyplan::api {
namespace {

std::string EntryText(const TensorEntry& entry) {
  return entry.shape.ToString() + " " + std::string(DTypeName(entry.dtype));
}

int64_t NumElements(const TensorEntry& tensor) { return tensor.shape.NumElements().value_or(0); }
int64_t Bytes(const TensorEntry& tensor) { return ByteSize(NumElements(tensor), DTypeBits(tensor.dtype)).value_or(0); }

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string Summary(const TreeTotals& totals) {
  return fmt::format("{} tensors, {} parameters, {}", WithThousands(totals.tensors), WithThousands(totals.params),
                     HumanBytesBinary(totals.bytes));
}

}  // namespace

std::string TreeToTable(const ParamTree& tree, const TreeTotals& totals) {
  struct Row {
    std::string name, shape, dtype, numel, bytes;
  };
  std::vector<Row> rows;
  rows.push_back({"name", "shape", "dtype", "numel", "bytes"});
  for (const TensorEntry& tensor : tree.tensors) {
    std::string dtype(DTypeName(tensor.dtype));
    if (tensor.role != TensorRole::kParameter) dtype += " (" + std::string(TensorRoleName(tensor.role)) + ")";
    rows.push_back({tensor.name, tensor.shape.ToString(), dtype, WithThousands(NumElements(tensor)),
                    WithThousands(Bytes(tensor))});
  }
  size_t w_name = 0, w_shape = 0, w_dtype = 0, w_numel = 0, w_bytes = 0;
  for (const Row& row : rows) {
    w_name = std::max(w_name, row.name.size());
    w_shape = std::max(w_shape, row.shape.size());
    w_dtype = std::max(w_dtype, row.dtype.size());
    w_numel = std::max(w_numel, row.numel.size());
    w_bytes = std::max(w_bytes, row.bytes.size());
  }
  std::string out;
  for (const Row& row : rows) {
    out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:>{}}  {:>{}}\n", row.name, w_name, row.shape, w_shape, row.dtype,
                       w_dtype, row.numel, w_numel, row.bytes, w_bytes);
  }
  out += fmt::format("{} ({} layout): {}\n", tree.model_type.empty() ? "tree" : tree.model_type,
                     LayoutName(tree.layout), Summary(totals));
  return out;
}

std::string TreeToCsv(const ParamTree& tree, const TreeTotals& totals) {
  std::string out = "name,shape,dtype,numel,bytes\n";
  for (const TensorEntry& tensor : tree.tensors) {
    std::string dtype(DTypeName(tensor.dtype));
    out += fmt::format("{},{},{},{},{}\n", CsvField(tensor.name), CsvField(tensor.shape.ToString()), dtype,
                       NumElements(tensor), Bytes(tensor));
  }
  out += fmt::format("total,,,{},{}\n", totals.params, totals.bytes);
  return out;
}

std::string DiffToText(const TreeDiff& diff) {
  std::string out;
  for (const TreeDifference& item : diff.differences) {
    switch (item.kind) {
      case TreeDifference::Kind::kMissing:
        out += fmt::format("missing     {}  (template: {})\n", item.name, EntryText(*item.expected));
        break;
      case TreeDifference::Kind::kExtra:
        out += fmt::format("extra       {}{}\n", item.name,
                           item.found ? "  (checkpoint: " + EntryText(*item.found) + ")" : "");
        break;
      case TreeDifference::Kind::kShape:
      case TreeDifference::Kind::kDType:
        out += fmt::format("{:<11} {}  template {}, checkpoint {}\n", TreeDifferenceKindName(item.kind), item.name,
                           EntryText(*item.expected), EntryText(*item.found));
        break;
      case TreeDifference::Kind::kTotalSize:
        out += fmt::format(
            "total_size  the index says {} bytes, the template's tensors hold {} bytes (a dtype differs?)\n",
            WithThousands(item.found_bytes), WithThousands(item.expected_bytes));
        break;
    }
  }
  out += fmt::format("{}: {} template tensors, {} checkpoint tensors", diff.checkpoint,
                     WithThousands(diff.expected_tensors), WithThousands(diff.checkpoint_tensors));
  if (diff.names_only > 0) out += fmt::format(" ({} by name only)", WithThousands(diff.names_only));
  size_t count = diff.differences.size();
  out += diff.Clean() ? "; they match\n" : fmt::format("; {} difference{}\n", count, count == 1 ? "" : "s");
  return out;
}

}  // namespace easyplan::api
