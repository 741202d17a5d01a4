#include "cli/tree_format.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/json_text.h"
#include "core/human.h"
#include "core/tree_json.h"

namespace easyplan::cli {
namespace {

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
                     HumanBytes(totals.bytes));
}

}  // namespace

Json TreeToJson(const ParamTree& tree, const TreeTotals& totals) {
  Json json = Json::object();
  json["model_type"] = tree.model_type;
  json["layout"] = std::string(LayoutName(tree.layout));
  Json params = Json::array();
  for (const TensorEntry& tensor : tree.tensors) {
    Json entry = Json::object();
    entry["name"] = tensor.name;
    entry["shape"] = Json(std::vector<int64_t>(tensor.shape.dims().begin(), tensor.shape.dims().end()));
    entry["dtype"] = std::string(DTypeName(tensor.dtype));
    if (tensor.role != TensorRole::kParameter) entry["role"] = std::string(TensorRoleName(tensor.role));
    params.push_back(std::move(entry));
  }
  json["params"] = std::move(params);
  json["total_tensors"] = totals.tensors;
  json["total_params"] = totals.params;
  json["total_bytes"] = totals.bytes;
  return json;
}

std::string TreeToJsonText(const ParamTree& tree, const TreeTotals& totals) {
  std::string out = "{\n";
  out += "  \"model_type\": " + Quoted(tree.model_type) + ",\n";
  out += "  \"layout\": \"" + std::string(LayoutName(tree.layout)) + "\",\n";
  out += "  \"params\": [";
  bool first = true;
  for (const TensorEntry& tensor : tree.tensors) {
    out += first ? "\n    " : ",\n    ";
    first = false;
    out += fmt::format("{{\"name\": {}, \"shape\": [{}], \"dtype\": \"{}\"", Quoted(tensor.name),
                       fmt::join(tensor.shape.dims(), ", "), DTypeName(tensor.dtype));
    if (tensor.role != TensorRole::kParameter) out += fmt::format(", \"role\": \"{}\"", TensorRoleName(tensor.role));
    out += "}";
  }
  out += first ? "],\n" : "\n  ],\n";
  out += fmt::format("  \"total_tensors\": {},\n  \"total_params\": {},\n  \"total_bytes\": {}\n}}\n", totals.tensors,
                     totals.params, totals.bytes);
  return out;
}

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

StatusOr<ParamTree> TreeFromJson(const Json& json, const std::string& file, int64_t max_tensors) {
  return TreeFromJsonValue(json, file, max_tensors);
}

}  // namespace easyplan::cli
