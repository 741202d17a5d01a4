#include "schemas/overrides.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/json_parse.h"
#include "core/utf8.h"

namespace easyplan::schemas {
namespace {

// The deepest nesting (a scalar is 0, [] is 1) and the value count of `value`, walked without
// recursion so that a --set value nested 100000 deep is measured, not followed down the stack. Stops
// counting once either exceeds its limit.
struct Extent {
  int depth = 0;
  size_t values = 0;
};
Extent Measure(const Json& value, const Limits& limits) {
  Extent extent;
  std::vector<std::pair<const Json*, int>> pending = {{&value, 0}};
  while (!pending.empty()) {
    const auto [node, depth] = pending.back();
    pending.pop_back();
    ++extent.values;
    if (node->is_structured()) {
      extent.depth = std::max(extent.depth, depth + 1);
      if (extent.depth > limits.max_depth || extent.values > limits.max_values) break;
      for (const Json& child : *node) pending.emplace_back(&child, depth + 1);
    }
  }
  return extent;
}

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

std::string SetForMessage(const std::string& assignment) {
  constexpr size_t kMax = 80;
  if (assignment.size() <= kMax) return "--set " + assignment;
  return "--set " + assignment.substr(0, kMax - 3) + "...";
}

StatusOr<std::string> ApplySet(Json& config, const std::string& assignment, const Limits& limits) {
  SourceLoc loc{SetForMessage(assignment)};
  // A config file's keys and strings are UTF-8 (the JSON and YAML readers refuse anything else); a command
  // line is bytes, and a string that is not UTF-8 cannot be written back out as JSON (the emitters
  // replace its bytes, the report page's and the activation plan's writers threw: exit 3).
  if (!IsValidUtf8(assignment)) {
    return Status::BadInput(loc, "expected UTF-8 text, found bytes that are not UTF-8",
                            {"a config's keys and strings are JSON's (RFC 8259 section 8.1: UTF-8)"});
  }
  size_t eq = assignment.find('=');
  if (eq == std::string::npos) {
    return Status::BadInput(loc, "expected KEY=VALUE, found no '='", {"example: --set rope_scaling.factor=8"});
  }
  std::string key = assignment.substr(0, eq);
  std::string text = assignment.substr(eq + 1);
  std::optional<Json> parsed = ParseJsonValue(text);
  Json value = parsed ? std::move(*parsed) : Json(text);  // not JSON: a plain string
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
  // The key's segments nest objects too: both count against the depth limit.
  const Extent extent = Measure(value, limits);
  const int depth = static_cast<int>(std::min<size_t>(path.size(), INT_MAX / 2)) + extent.depth;
  if (depth > limits.max_depth) {
    return Status::BadInput(loc, "the value nests deeper than " + std::to_string(limits.max_depth) + " levels",
                            {LimitNote("--max-depth", limits.max_depth)});
  }
  if (extent.values > limits.max_values) {
    return Status::BadInput(loc, "the value has more than " + std::to_string(limits.max_values) + " values",
                            {LimitNote("--max-values", limits.max_values)});
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
