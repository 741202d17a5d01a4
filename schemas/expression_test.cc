#include "schemas/expression.h"

#include <gtest/gtest.h>

namespace easyplan::schemas {
namespace {

Json Eval(const std::string& text, const Json& scope = Json::object()) {
  auto expr = Expression::Parse(text);
  EXPECT_TRUE(expr.ok()) << expr.status().ToString();
  if (!expr.ok()) return "<parse error>";
  auto value = expr->Evaluate(scope);
  EXPECT_TRUE(value.ok()) << value.status().ToString();
  return value.ok() ? *value : Json("<eval error>");
}

std::string EvalError(const std::string& text, const Json& scope = Json::object()) {
  auto expr = Expression::Parse(text);
  if (!expr.ok()) return expr.status().diag().message;
  auto value = expr->Evaluate(scope);
  return value.ok() ? "no error, got " + value->dump() : value.status().diag().message;
}

TEST(ExpressionTest, FloorDivisionOfConfigKeys) {
  Json config = {{"hidden_size", 4096}, {"num_attention_heads", 32}};
  EXPECT_EQ(Eval("hidden_size // num_attention_heads", config), 128);
}

TEST(ExpressionTest, FloorDivisionAndModuloFollowPython) {
  EXPECT_EQ(Eval("-7 // 2"), -4);
  EXPECT_EQ(Eval("-7 % 2"), 1);
  EXPECT_EQ(Eval("7 % -2"), -1);
  EXPECT_EQ(Eval("7 / 2"), 3.5);
}

TEST(ExpressionTest, MissingNameReadsAsNull) {
  EXPECT_EQ(Eval("head_dim == null"), true);
  EXPECT_EQ(Eval("rope_scaling.factor", Json{{"rope_scaling", nullptr}}), nullptr);
}

TEST(ExpressionTest, ConditionalAndBooleanOperators) {
  Json config = {{"use_sliding_window", false}, {"sliding_window", 4096}};
  EXPECT_EQ(Eval("sliding_window if use_sliding_window else null", config), nullptr);
  EXPECT_EQ(Eval("not use_sliding_window and sliding_window > 10", config), true);
  EXPECT_EQ(Eval("0 or 'x'"), "x");
}

TEST(ExpressionTest, ComprehensionBuildsLayerTypes) {
  Json config = {{"num_hidden_layers", 4}};
  EXPECT_EQ(
      Eval("['sliding_attention' if (i + 1) % 2 == 1 else 'full_attention' for i in range(num_hidden_layers)]", config),
      Json({"sliding_attention", "full_attention", "sliding_attention", "full_attention"}));
  EXPECT_EQ(Eval("[i for i in range(2, 6) if i not in [3]]"), Json({2, 4, 5}));
}

TEST(ExpressionTest, MembershipAndFunctions) {
  EXPECT_EQ(Eval("2 in mlp_only_layers", Json{{"mlp_only_layers", {1, 2}}}), true);
  EXPECT_EQ(Eval("len([1, 2, 3])"), 3);
  EXPECT_EQ(Eval("max(3, 9, 4)"), 9);
  EXPECT_EQ(Eval("int(96 * 1.0) // 2"), 48);
  EXPECT_EQ(Eval("x[-1]", Json{{"x", {1, 2, 3}}}), 3);
}

TEST(ExpressionTest, IntegerAndFloatCompareEqual) { EXPECT_EQ(Eval("1 == 1.0"), true); }

TEST(ExpressionTest, OverflowIsAnErrorNotAWrongValue) {
  EXPECT_EQ(EvalError("x * 4", Json{{"x", int64_t{1} << 62}}),
            "expression 'x * 4': integer overflow in 4611686018427387904 * 4");
}

// issue 36: Python would give inf, which no output can show (core/emit.h).
TEST(ExpressionTest, FloatOverflowIsAnErrorNotInfinity) {
  EXPECT_EQ(EvalError("theta * 10", Json{{"theta", 1e308}}), "expression 'theta * 10': float overflow in 1e+308 * 10");
  EXPECT_EQ(EvalError("x / 1e-300", Json{{"x", 1e300}}), "expression 'x / 1e-300': float overflow in 1e+300 / 1e-300");
  EXPECT_EQ(Eval("theta * 2", Json{{"theta", 5e307}}), 1e308);
}

TEST(ExpressionTest, DivisionByZeroIsAnError) {
  EXPECT_EQ(EvalError("h // n", Json{{"h", 8}, {"n", 0}}), "expression 'h // n': integer division by zero (8 // 0)");
}

TEST(ExpressionTest, HugeRangeIsRefusedBeforeAllocating) {
  EXPECT_EQ(EvalError("range(n)", Json{{"n", int64_t{1} << 40}}),
            "expression 'range(n)': range(0, 1099511627776) is longer than the limit of 1048576 elements");
}

TEST(ExpressionTest, NestedComprehensionsShareOneElementBudget) {
  std::string error = EvalError("[[j for j in range(1000000)] for i in range(1000000)]");
  EXPECT_NE(error.find("builds more than"), std::string::npos) << error;
}

TEST(ExpressionTest, ParseErrorsNameTheExpression) {
  EXPECT_EQ(EvalError("a +"), "invalid expression 'a +': unexpected end");
  EXPECT_EQ(EvalError("a if b"), "invalid expression 'a if b': expected 'else' but found 'end'");
  EXPECT_EQ(EvalError("f(1)"), "expression 'f(1)': unknown function 'f' (known: range, len, min, max, int, float)");
  EXPECT_EQ(EvalError("'abc"), "invalid expression ''abc': unterminated string");
}

TEST(ExpressionTest, TypeMismatchNamesBothOperands) {
  EXPECT_EQ(EvalError("a + 1", Json{{"a", "x"}}), "expression 'a + 1': cannot apply '+' to string \"x\" and integer 1");
}

TEST(ExpressionTest, TruthinessFollowsPython) {
  EXPECT_FALSE(IsTruthy(Json(nullptr)));
  EXPECT_FALSE(IsTruthy(Json(0)));
  EXPECT_FALSE(IsTruthy(Json::array()));
  EXPECT_FALSE(IsTruthy(Json("")));
  EXPECT_TRUE(IsTruthy(Json(0.5)));
  EXPECT_TRUE(IsTruthy(Json({1})));
}

}  // namespace
}  // namespace easyplan::schemas
