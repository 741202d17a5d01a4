#ifndef EASYPLAN_SCHEMAS_TYPE_SPEC_H_
#define EASYPLAN_SCHEMAS_TYPE_SPEC_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/status.h"

namespace easyplan::schemas {

/// The declared type of a config key, e.g. "size", "int|list[int]?", "dtype" (grammar in
/// docs/SCHEMAS.md). Checking a value may canonicalise it (dtype aliases become canonical names).
class TypeSpec {
 public:
  enum class Base { kAny, kSize, kUInt, kInt, kNumber, kBool, kString, kDType, kAxis, kObject, kList };

  /// Default: `any`.
  TypeSpec() = default;
  static StatusOr<TypeSpec> Parse(std::string_view text);

  /// nullopt when `value` conforms (after canonicalising it in place); otherwise what was expected,
  /// e.g. "a positive integer", "an integer or a list of integers, or null".
  std::optional<std::string> Check(Json& value) const;

  /// The spelling it was parsed from.
  const std::string& text() const { return text_; }
  bool nullable() const { return nullable_; }

 private:
  struct Alternative {
    Base base = Base::kAny;
    std::shared_ptr<const TypeSpec> element;  // kList with a declared element type
  };

  bool Matches(const Alternative& alt, Json& value) const;
  std::string Describe() const;

  std::string text_ = "any";
  std::vector<Alternative> alternatives_ = {Alternative{}};
  bool nullable_ = false;
};

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_TYPE_SPEC_H_
