#include "tests/test_util_json_schema.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/json_pointer.h"
#include "tests/test_util.h"

namespace easyplan::testing {

namespace fs = std::filesystem;

void ValidateJsonSchema(const Json& root, const Json& schema, const Json& value, const std::string& pointer,
                        std::vector<std::string>& errors) {
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"].get<std::string>();
    ASSERT_TRUE(ref.starts_with("#/$defs/")) << ref;
    ValidateJsonSchema(root, root["$defs"][ref.substr(8)], value, pointer, errors);
    return;
  }
  auto fail = [&](const std::string& why) { errors.push_back(pointer + ": " + why + " (found " + value.dump() + ")"); };
  if (schema.contains("type")) {
    const std::string type = schema["type"].get<std::string>();
    const bool ok = (type == "object" && value.is_object()) || (type == "array" && value.is_array()) ||
                    (type == "string" && value.is_string()) || (type == "integer" && value.is_number_integer()) ||
                    (type == "null" && value.is_null()) || (type == "boolean" && value.is_boolean());
    if (!ok) return fail("expected " + type);
  }
  if (schema.contains("enum") &&
      std::find(schema["enum"].begin(), schema["enum"].end(), value) == schema["enum"].end()) {
    return fail("not one of " + schema["enum"].dump());
  }
  for (const char* key : {"anyOf", "oneOf"}) {
    if (!schema.contains(key)) continue;
    int matched = 0;
    for (const Json& option : schema[key]) {
      std::vector<std::string> sub;
      ValidateJsonSchema(root, option, value, pointer, sub);
      matched += sub.empty() ? 1 : 0;
    }
    if (matched == 0 || (std::string(key) == "oneOf" && matched > 1)) fail(std::string("does not match ") + key);
  }
  if (value.is_number_integer() && schema.contains("minimum") &&
      value.get<int64_t>() < schema["minimum"].get<int64_t>()) {
    fail("below minimum");
  }
  if (value.is_string() && schema.contains("minLength") &&
      value.get<std::string>().size() < schema["minLength"].get<size_t>()) {
    fail("shorter than minLength");
  }
  if (value.is_array()) {
    if (schema.contains("minItems") && value.size() < schema["minItems"].get<size_t>()) fail("too few items");
    if (schema.contains("maxItems") && value.size() > schema["maxItems"].get<size_t>()) fail("too many items");
    if (schema.contains("items")) {
      for (size_t i = 0; i < value.size(); ++i)
        ValidateJsonSchema(root, schema["items"], value[i], PointerToElement(pointer, i), errors);
    }
  }
  if (value.is_object()) {
    const Json empty = Json::object();
    const Json& properties = schema.contains("properties") ? schema["properties"] : empty;
    if (schema.contains("required")) {
      for (const Json& key : schema["required"]) {
        if (!value.contains(key.get<std::string>())) fail("missing required key '" + key.get<std::string>() + "'");
      }
    }
    for (const auto& [key, member] : value.items()) {
      if (properties.contains(key)) {
        ValidateJsonSchema(root, properties[key], member, PointerToMember(pointer, key), errors);
      } else if (schema.contains("additionalProperties") && schema["additionalProperties"] == false) {
        fail("key '" + key + "' is not in the schema");
      } else if (schema.contains("additionalProperties") && schema["additionalProperties"].is_object()) {
        ValidateJsonSchema(root, schema["additionalProperties"], member, PointerToMember(pointer, key), errors);
      }
    }
  }
}

std::vector<std::string> GoldenJsonOutputs(const std::string& command) {
  std::vector<std::string> outputs;
  for (const auto& entry : fs::directory_iterator(fs::path(SourceDir()) / "tests/golden" / command)) {
    if (entry.path().extension() != ".args") continue;
    const std::string args = ReadTestFile(entry.path().string());
    fs::path base = entry.path();
    base.replace_extension();
    if (args.find("\njson\n") == std::string::npos || ReadTestFile(base.string() + ".exit") != "0\n") continue;
    if (fs::exists(base.string() + ".files")) {
      for (const auto& file : fs::directory_iterator(base.string() + ".files")) outputs.push_back(file.path().string());
    } else {
      outputs.push_back(base.string() + ".stdout");
    }
  }
  std::sort(outputs.begin(), outputs.end());
  return outputs;
}

}  // namespace easyplan::testing
