#include "cli/tree_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/did_you_mean.h"
#include "core/human.h"

namespace easyplan::cli {
namespace {

int64_t NumElements(const TensorEntry& tensor) { return tensor.shape.NumElements().value_or(0); }
int64_t Bytes(const TensorEntry& tensor) {
  return ByteSize(NumElements(tensor), DTypeBits(tensor.dtype)).value_or(0);
}

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

// A JSON string literal; invalid UTF-8 (impossible from our parsers, but never a throw) is replaced.
std::string Quoted(const std::string& text) { return Json(text).dump(-1, ' ', false, Json::error_handler_t::replace); }

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
  out += fmt::format("{} ({} layout): {}\n", tree.model_type.empty() ? "tree" : tree.model_type, LayoutName(tree.layout),
                     Summary(totals));
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
  auto error = [&](const std::string& pointer, const std::string& message) {
    return Status::BadInput(SourceLoc{file, pointer}, message);
  };
  if (!json.is_object()) return error("", "expected a tree object {model_type, layout, params}, found " +
                                              std::string(JsonTypeName(json)));
  ParamTree tree;
  if (auto it = json.find("model_type"); it != json.end() && !it->is_null()) {
    if (!it->is_string()) return error("/model_type", "expected a string, found " + std::string(JsonTypeName(*it)));
    tree.model_type = it->get<std::string>();
  }
  if (auto it = json.find("layout"); it != json.end()) {
    std::optional<Layout> layout = it->is_string() ? ParseLayout(it->get<std::string>()) : std::nullopt;
    if (!layout) return error("/layout", "expected \"easydel\" or \"hf\", found " + JsonForMessage(*it));
    tree.layout = *layout;
  }
  auto params = json.find("params");
  if (params == json.end() || !params->is_array()) return error("/params", "expected a list of tensors");
  if (static_cast<int64_t>(params->size()) > max_tensors) {
    return error("/params", fmt::format("{} tensors exceed the limit of {} (raise it with --max-tensors)",
                                        params->size(), max_tensors));
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < params->size(); ++i) {
    const Json& entry = (*params)[i];
    std::string pointer = "/params/" + std::to_string(i);
    if (!entry.is_object()) return error(pointer, "expected {name, shape, dtype}, found " + std::string(JsonTypeName(entry)));
    auto name = entry.find("name");
    if (name == entry.end() || !name->is_string() || name->get<std::string>().empty()) {
      return error(pointer + "/name", "expected a non-empty tensor name");
    }
    TensorEntry tensor;
    tensor.name = name->get<std::string>();
    if (!seen.insert(tensor.name).second) return error(pointer + "/name", "tensor '" + tensor.name + "' appears twice");
    auto shape = entry.find("shape");
    if (shape == entry.end() || !shape->is_array()) {
      return error(pointer + "/shape", "tensor '" + tensor.name + "': expected a list of dims");
    }
    std::vector<int64_t> dims;
    for (const Json& dim : *shape) {
      if (!dim.is_number_integer() || dim.get<int64_t>() < 0) {
        return error(pointer + "/shape", "tensor '" + tensor.name + "': dims must be non-negative integers, found " +
                                             JsonForMessage(dim));
      }
      dims.push_back(dim.get<int64_t>());
    }
    tensor.shape = Shape(std::move(dims));
    auto dtype = entry.find("dtype");
    if (dtype == entry.end() || !dtype->is_string()) {
      return error(pointer + "/dtype", "tensor '" + tensor.name + "': expected a dtype name");
    }
    std::optional<DType> parsed = ParseDType(dtype->get<std::string>());
    if (!parsed) {
      std::string message = "tensor '" + tensor.name + "': unknown dtype '" + dtype->get<std::string>() + "'";
      std::vector<std::string> names(AllDTypeNames().begin(), AllDTypeNames().end());
      if (auto suggestion = SuggestClosest(dtype->get<std::string>(), names)) {
        message += " (did you mean '" + *suggestion + "'?)";
      }
      return error(pointer + "/dtype", message);
    }
    tensor.dtype = *parsed;
    if (auto role = entry.find("role"); role != entry.end()) {
      std::string text = role->is_string() ? role->get<std::string>() : "";
      if (text == "buffer") {
        tensor.role = TensorRole::kBuffer;
      } else if (text == "scale") {
        tensor.role = TensorRole::kScale;
      } else if (text != "parameter") {
        return error(pointer + "/role", "expected \"parameter\", \"buffer\" or \"scale\", found " + JsonForMessage(*role));
      }
    }
    tree.tensors.push_back(std::move(tensor));
  }
  return tree;
}

}  // namespace easyplan::cli
