#include "schemas/overrides.h"

#include <cstdint>

namespace easyplan::schemas {
namespace {

void DeepMerge(Json& target, const Json& source) {
  for (const auto& [key, value] : source.items()) {
    if (value.is_object() && target.contains(key) && target[key].is_object()) {
      DeepMerge(target[key], value);
    } else {
      target[key] = value;
    }
  }
}

}  // namespace

StatusOr<std::string> ApplySet(Json& config, const std::string& assignment) {
  SourceLoc loc{"--set " + assignment};
  size_t eq = assignment.find('=');
  if (eq == std::string::npos) {
    return Status::BadInput(loc, "expected KEY=VALUE, found no '='", {"example: --set rope_scaling.factor=8"});
  }
  std::string key = assignment.substr(0, eq);
  std::string text = assignment.substr(eq + 1);
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = text;  // not JSON: a plain string
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return Status::BadInput(loc, "integer " + text + " does not fit in 64 bits");
  }

  std::vector<std::string> path;
  size_t start = 0;
  while (true) {
    size_t dot = key.find('.', start);
    std::string segment = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (segment.empty()) return Status::BadInput(loc, "key '" + key + "' has an empty segment");
    path.push_back(segment);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  Json* node = &config;
  std::string walked;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    walked += (walked.empty() ? "" : ".") + path[i];
    Json& child = (*node)[path[i]];
    if (child.is_null()) child = Json::object();
    if (!child.is_object()) {
      return Status::BadInput(loc, "cannot set '" + key + "': '" + walked + "' is " + JsonTypeName(child) + " " +
                                       JsonForMessage(child) + ", not an object");
    }
    node = &child;
  }
  (*node)[path.back()] = std::move(value);
  return path.front();
}

std::vector<std::string> MergeOverrides(Json& config, const Json& overrides) {
  std::vector<std::string> touched;
  for (const auto& [key, value] : overrides.items()) touched.push_back(key);
  DeepMerge(config, overrides);
  return touched;
}

}  // namespace easyplan::schemas
