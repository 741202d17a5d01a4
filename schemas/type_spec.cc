#include "schemas/type_spec.h"

#include "core/dtype.h"

namespace easyplan::schemas {
namespace {

struct BaseName {
  TypeSpec::Base base;
  std::string_view name;
  std::string_view description;
};

constexpr BaseName kBaseNames[] = {
    {TypeSpec::Base::kAny, "any", "any value"},
    {TypeSpec::Base::kSize, "size", "a positive integer"},
    {TypeSpec::Base::kUInt, "uint", "a non-negative integer"},
    {TypeSpec::Base::kInt, "int", "an integer"},
    {TypeSpec::Base::kNumber, "number", "a number"},
    {TypeSpec::Base::kBool, "bool", "a boolean"},
    {TypeSpec::Base::kString, "string", "a string"},
    {TypeSpec::Base::kDType, "dtype", "a dtype name"},
    {TypeSpec::Base::kAxis, "axis", "a mesh axis name, a list of names, or null"},
    {TypeSpec::Base::kObject, "object", "an object"},
    {TypeSpec::Base::kList, "list", "a list"},
};

bool IsInteger(const Json& v) { return v.is_number_integer(); }

}  // namespace

StatusOr<TypeSpec> TypeSpec::Parse(std::string_view text) {
  TypeSpec spec;
  spec.text_ = std::string(text);
  spec.alternatives_.clear();
  std::string_view rest = text;
  if (rest.ends_with("?")) {
    spec.nullable_ = true;
    rest.remove_suffix(1);
  }
  auto bad = [&](const std::string& why) {
    return Status::BadInput({}, "invalid type '" + std::string(text) + "': " + why);
  };
  // Split on top-level '|' (brackets nest).
  int depth = 0;
  size_t start = 0;
  std::vector<std::string_view> parts;
  for (size_t i = 0; i <= rest.size(); ++i) {
    if (i == rest.size() || (rest[i] == '|' && depth == 0)) {
      parts.push_back(rest.substr(start, i - start));
      start = i + 1;
    } else if (rest[i] == '[') {
      ++depth;
    } else if (rest[i] == ']') {
      --depth;
    }
  }
  for (std::string_view part : parts) {
    Alternative alt;
    std::string_view name = part;
    if (size_t open = part.find('['); open != std::string_view::npos) {
      if (!part.ends_with("]")) return bad("missing ']'");
      name = part.substr(0, open);
      EP_ASSIGN_OR_RETURN(TypeSpec element, Parse(part.substr(open + 1, part.size() - open - 2)));
      alt.element = std::make_shared<const TypeSpec>(std::move(element));
    }
    bool known = false;
    for (const BaseName& base : kBaseNames) {
      if (base.name == name) {
        alt.base = base.base;
        known = true;
      }
    }
    if (!known) return bad("unknown type name '" + std::string(name) + "'");
    if (alt.element && alt.base != Base::kList) return bad("only list takes an element type");
    spec.alternatives_.push_back(std::move(alt));
  }
  return spec;
}

bool TypeSpec::Matches(const Alternative& alt, Json& value) const {
  switch (alt.base) {
    case Base::kAny:
      return true;
    case Base::kSize:
      return IsInteger(value) && value.get<int64_t>() >= 1;
    case Base::kUInt:
      return IsInteger(value) && value.get<int64_t>() >= 0;
    case Base::kInt:
      return IsInteger(value);
    case Base::kNumber:
      return value.is_number();
    case Base::kBool:
      return value.is_boolean();
    case Base::kString:
      return value.is_string();
    case Base::kDType: {
      if (!value.is_string()) return false;
      auto dtype = ParseDType(value.get<std::string>());
      if (!dtype) return false;
      value = std::string(DTypeName(*dtype));
      return true;
    }
    case Base::kAxis: {
      if (value.is_null() || value.is_string()) return true;
      if (!value.is_array()) return false;
      for (const Json& item : value) {
        if (!item.is_string() && !item.is_null()) return false;
      }
      return true;
    }
    case Base::kObject:
      return value.is_object();
    case Base::kList: {
      if (!value.is_array()) return false;
      if (!alt.element) return true;
      Json copy = value;
      for (Json& item : copy) {
        if (alt.element->Check(item)) return false;
      }
      value = std::move(copy);
      return true;
    }
  }
  return false;
}

std::optional<std::string> TypeSpec::Check(Json& value) const {
  if (value.is_null() && nullable_) return std::nullopt;
  for (const Alternative& alt : alternatives_) {
    if (Matches(alt, value)) return std::nullopt;
  }
  return Describe();
}

std::string TypeSpec::Describe() const {
  std::string out;
  for (size_t i = 0; i < alternatives_.size(); ++i) {
    if (i > 0) out += i + 1 == alternatives_.size() ? " or " : ", ";
    const Alternative& alt = alternatives_[i];
    if (alt.base == Base::kList && alt.element) {
      out += "a list of (" + alt.element->Describe() + ")";
      continue;
    }
    for (const BaseName& base : kBaseNames) {
      if (base.base == alt.base) out += base.description;
    }
  }
  if (nullable_) out += ", or null";
  return out;
}

}  // namespace easyplan::schemas
