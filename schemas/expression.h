#ifndef EASYPLAN_SCHEMAS_EXPRESSION_H_
#define EASYPLAN_SCHEMAS_EXPRESSION_H_

#include <memory>
#include <string>
#include <string_view>

#include "core/json.h"
#include "core/status.h"

namespace easyplan::schemas {

struct ExprNode;

/// A parsed schema expression: the small Python-like language of docs/SCHEMAS.md, used by family
/// files for computed defaults, derived fields and checks. Immutable and cheap to copy.
///
///   auto e = Expression::Parse("hidden_size // num_attention_heads");
///   e->Evaluate(config)  ->  128
///
/// Evaluation is total: every failure (unknown function, type mismatch, overflow, division by zero,
/// a range longer than kMaxRangeLength) is a Status, never a crash or an unbounded allocation.
class Expression {
 public:
  /// Longest list that `range()` or a comprehension may build.
  static constexpr int64_t kMaxRangeLength = int64_t{1} << 20;

  /// Errors are BadInput without a location: "invalid expression 'a +': unexpected end".
  static StatusOr<Expression> Parse(std::string_view text);

  /// Evaluates with free names looked up as keys of `scope` (an object; a missing key is null).
  /// Errors are BadInput without a location; the caller adds where the expression came from.
  StatusOr<Json> Evaluate(const Json& scope) const;

  /// The source text, as written in the schema.
  const std::string& text() const { return text_; }

 private:
  Expression(std::string text, std::shared_ptr<const ExprNode> root) : text_(std::move(text)), root_(std::move(root)) {}

  std::string text_;
  std::shared_ptr<const ExprNode> root_;
};

/// Python truthiness: null, false, 0, 0.0, "", [] and {} are false.
bool IsTruthy(const Json& value);

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_EXPRESSION_H_
