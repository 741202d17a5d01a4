#include "core/json.h"

#include <cmath>

namespace easyplan {

const char* JsonTypeName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "float";
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "value";
  }
}

void AppendMember(Json& object, std::string key, Json value) {
  Json::object_t::Container& members = *object.get_ptr<Json::object_t*>();
  members.emplace_back(std::move(key), std::move(value));
}

std::string JsonForMessage(const Json& value, size_t max_chars) {
  // nlohmann dumps a non-finite float as `null`, which is not what the user wrote: a YAML file can hold
  // .inf and .nan (YAML 1.2, 10.2.1.4 "Floating Point"), so they are shown in its spelling.
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    const double number = value.get<double>();
    return std::isnan(number) ? ".nan" : (number > 0 ? ".inf" : "-.inf");
  }
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > max_chars) text = text.substr(0, max_chars - 3) + "...";
  return text;
}

std::string DescribeFound(const Json& value) {
  if (value.is_number_integer()) return JsonForMessage(value);
  return std::string(JsonTypeName(value)) + " " + JsonForMessage(value);
}

}  // namespace easyplan
