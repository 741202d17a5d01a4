#include "core/tree_json.h"

#include <fmt/format.h>

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/did_you_mean.h"
#include "core/document.h"
#include "core/dtype.h"
#include "core/json_parse.h"
#include "core/json_pointer.h"
#include "core/tree_json_scan.h"

namespace easyplan {

// -----------------------------------------------------------------------------------------------
// The reference path.

StatusOr<ParamTree> TreeFromJsonValue(const Json& json, const std::string& file, int64_t max_tensors) {
  auto error = [&](const std::string& pointer, const std::string& message) {
    return Status::BadInput(SourceLoc{file, pointer}, message);
  };
  if (!json.is_object()) {
    return error("", "expected a tree object {model_type, layout, params}, found " + std::string(JsonTypeName(json)));
  }
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
    std::string pointer = PointerToElement("/params", i);
    if (!entry.is_object()) {
      return error(pointer, "expected {name, shape, dtype}, found " + std::string(JsonTypeName(entry)));
    }
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
        return error(pointer + "/shape",
                     "tensor '" + tensor.name + "': dims must be non-negative integers, found " + JsonForMessage(dim));
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
      const std::optional<TensorRole> parsed_role =
          role->is_string() ? ParseTensorRole(role->get<std::string>()) : std::nullopt;
      if (!parsed_role) {
        return error(pointer + "/role",
                     "expected \"parameter\", \"buffer\" or \"scale\", found " + JsonForMessage(*role));
      }
      tensor.role = *parsed_role;
    }
    tree.tensors.push_back(std::move(tensor));
  }
  return tree;
}

StatusOr<ParamTree> ParseTreeJsonDocument(std::string_view text, const std::string& file, const Limits& limits,
                                          int64_t max_tensors) {
  EP_ASSIGN_OR_RETURN(Document doc, ParseJsonDocument(text, file, limits));
  auto tree = TreeFromJsonValue(doc.root(), file, max_tensors);
  if (!tree.ok()) {
    // Add the line:column of the offending value.
    Status status = tree.status();
    status.mutable_diag().loc = doc.Locate(status.diag().loc.pointer);
    return status;
  }
  return tree;
}

StatusOr<ParamTree> ParseTreeJson(std::string_view text, const std::string& file, const Limits& limits,
                                  int64_t max_tensors) {
  ParamTree tree;
  if (ScanTreeJson(text, limits, max_tensors, &tree)) return tree;
  return ParseTreeJsonDocument(text, file, limits, max_tensors);
}

}  // namespace easyplan
