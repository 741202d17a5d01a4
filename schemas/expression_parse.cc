// Tokenizer and recursive-descent parser for schema expressions (grammar in docs/SCHEMAS.md).
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <vector>

#include "schemas/expression.h"
#include "schemas/expression_node.h"

namespace easyplan::schemas {
namespace {

enum class TokenKind { kNumber, kString, kIdentifier, kOperator, kEnd };

struct Token {
  TokenKind kind;
  std::string text;
  Json value;  // kNumber, kString
  size_t offset;
};

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  StatusOr<std::shared_ptr<const ExprNode>> ParseAll() {
    EP_RETURN_IF_ERROR(Tokenize());
    EP_ASSIGN_OR_RETURN(auto node, ParseExpr());
    if (Peek().kind != TokenKind::kEnd) return Error("unexpected '" + Peek().text + "'");
    return node;
  }

 private:
  using NodePtr = std::shared_ptr<const ExprNode>;

  Status Error(const std::string& what) const {
    return Status::BadInput({}, "invalid expression '" + std::string(text_) + "': " + what);
  }

  Status Tokenize() {
    size_t i = 0;
    while (i < text_.size()) {
      char c = text_[i];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && i + 1 < text_.size() && std::isdigit(static_cast<unsigned char>(text_[i + 1])))) {
        EP_RETURN_IF_ERROR(LexNumber(i));
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t start = i;
        while (i < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[i])) || text_[i] == '_')) ++i;
        tokens_.push_back({TokenKind::kIdentifier, std::string(text_.substr(start, i - start)), {}, start});
      } else if (c == '\'' || c == '"') {
        size_t start = i++;
        std::string value;
        while (i < text_.size() && text_[i] != c) {
          if (text_[i] == '\\' && i + 1 < text_.size()) ++i;
          value += text_[i++];
        }
        if (i >= text_.size()) return Error("unterminated string");
        ++i;
        tokens_.push_back({TokenKind::kString, std::string(text_.substr(start, i - start)), value, start});
      } else {
        static constexpr std::string_view kTwoChar[] = {"//", "==", "!=", "<=", ">="};
        std::string op(1, c);
        for (std::string_view two : kTwoChar) {
          if (text_.substr(i, 2) == two) op = std::string(two);
        }
        if (op.size() == 1 && std::string_view("+-*/%<>()[],.").find(c) == std::string_view::npos) {
          return Error(std::string("unexpected character '") + c + "'");
        }
        tokens_.push_back({TokenKind::kOperator, op, {}, i});
        i += op.size();
      }
    }
    tokens_.push_back({TokenKind::kEnd, "end", {}, text_.size()});
    return Status();
  }

  Status LexNumber(size_t& i) {
    size_t start = i;
    bool is_float = false;
    while (i < text_.size() && std::isdigit(static_cast<unsigned char>(text_[i]))) ++i;
    if (i < text_.size() && text_[i] == '.') {
      is_float = true;
      ++i;
      while (i < text_.size() && std::isdigit(static_cast<unsigned char>(text_[i]))) ++i;
    }
    if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
      is_float = true;
      ++i;
      if (i < text_.size() && (text_[i] == '+' || text_[i] == '-')) ++i;
      if (i >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[i]))) return Error("bad number");
      while (i < text_.size() && std::isdigit(static_cast<unsigned char>(text_[i]))) ++i;
    }
    std::string literal(text_.substr(start, i - start));
    Json value;
    if (is_float) {
      value = std::strtod(literal.c_str(), nullptr);
    } else {
      int64_t parsed = 0;
      auto [ptr, ec] = std::from_chars(literal.data(), literal.data() + literal.size(), parsed);
      if (ec != std::errc() || ptr != literal.data() + literal.size()) {
        return Error("integer " + literal + " does not fit in 64 bits");
      }
      value = parsed;
    }
    tokens_.push_back({TokenKind::kNumber, literal, value, start});
    return Status();
  }

  const Token& Peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  bool IsOp(std::string_view op, size_t ahead = 0) const {
    return Peek(ahead).kind == TokenKind::kOperator && Peek(ahead).text == op;
  }
  bool IsKeyword(std::string_view word, size_t ahead = 0) const {
    return Peek(ahead).kind == TokenKind::kIdentifier && Peek(ahead).text == word;
  }
  Status Expect(std::string_view op) {
    if (!IsOp(op)) return Error("expected '" + std::string(op) + "' but found '" + Peek().text + "'");
    ++pos_;
    return Status();
  }

  static NodePtr Make(ExprKind kind, std::vector<NodePtr> children = {}, std::string op = "", std::string name = "") {
    auto node = std::make_shared<ExprNode>();
    node->kind = kind;
    node->children = std::move(children);
    node->op = std::move(op);
    node->name = std::move(name);
    return node;
  }

  StatusOr<NodePtr> ParseExpr() {
    if (++depth_ > kMaxDepth) return Error("nested too deeply");
    auto result = ParseConditional();
    --depth_;
    return result;
  }

  StatusOr<NodePtr> ParseConditional() {
    EP_ASSIGN_OR_RETURN(NodePtr then_value, ParseOr());
    if (!IsKeyword("if")) return then_value;
    ++pos_;
    EP_ASSIGN_OR_RETURN(NodePtr condition, ParseOr());
    if (!IsKeyword("else")) return Error("expected 'else' but found '" + Peek().text + "'");
    ++pos_;
    EP_ASSIGN_OR_RETURN(NodePtr else_value, ParseExpr());
    return Make(ExprKind::kConditional, {condition, then_value, else_value});
  }

  StatusOr<NodePtr> ParseOr() {
    EP_ASSIGN_OR_RETURN(NodePtr left, ParseAnd());
    while (IsKeyword("or")) {
      ++pos_;
      EP_ASSIGN_OR_RETURN(NodePtr right, ParseAnd());
      left = Make(ExprKind::kBinary, {left, right}, "or");
    }
    return left;
  }

  StatusOr<NodePtr> ParseAnd() {
    EP_ASSIGN_OR_RETURN(NodePtr left, ParseNot());
    while (IsKeyword("and")) {
      ++pos_;
      EP_ASSIGN_OR_RETURN(NodePtr right, ParseNot());
      left = Make(ExprKind::kBinary, {left, right}, "and");
    }
    return left;
  }

  StatusOr<NodePtr> ParseNot() {
    if (IsKeyword("not")) {
      ++pos_;
      if (++depth_ > kMaxDepth) return Error("nested too deeply");
      EP_ASSIGN_OR_RETURN(NodePtr operand, ParseNot());
      --depth_;
      return Make(ExprKind::kUnary, {operand}, "not");
    }
    return ParseComparison();
  }

  StatusOr<NodePtr> ParseComparison() {
    EP_ASSIGN_OR_RETURN(NodePtr left, ParseAdditive());
    std::string op;
    for (std::string_view candidate : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (IsOp(candidate)) op = std::string(candidate);
    }
    if (op.empty() && IsKeyword("in")) op = "in";
    if (op.empty() && IsKeyword("not") && IsKeyword("in", 1)) {
      op = "not in";
      ++pos_;
    }
    if (op.empty()) return left;
    ++pos_;
    EP_ASSIGN_OR_RETURN(NodePtr right, ParseAdditive());
    return Make(ExprKind::kBinary, {left, right}, op);
  }

  StatusOr<NodePtr> ParseAdditive() {
    EP_ASSIGN_OR_RETURN(NodePtr left, ParseMultiplicative());
    while (IsOp("+") || IsOp("-")) {
      std::string op = Peek().text;
      ++pos_;
      EP_ASSIGN_OR_RETURN(NodePtr right, ParseMultiplicative());
      left = Make(ExprKind::kBinary, {left, right}, op);
    }
    return left;
  }

  StatusOr<NodePtr> ParseMultiplicative() {
    EP_ASSIGN_OR_RETURN(NodePtr left, ParseUnary());
    while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
      std::string op = Peek().text;
      ++pos_;
      EP_ASSIGN_OR_RETURN(NodePtr right, ParseUnary());
      left = Make(ExprKind::kBinary, {left, right}, op);
    }
    return left;
  }

  StatusOr<NodePtr> ParseUnary() {
    if (IsOp("-")) {
      ++pos_;
      if (++depth_ > kMaxDepth) return Error("nested too deeply");
      EP_ASSIGN_OR_RETURN(NodePtr operand, ParseUnary());
      --depth_;
      return Make(ExprKind::kUnary, {operand}, "-");
    }
    return ParsePostfix();
  }

  StatusOr<NodePtr> ParsePostfix() {
    EP_ASSIGN_OR_RETURN(NodePtr node, ParsePrimary());
    while (true) {
      if (IsOp(".")) {
        ++pos_;
        if (Peek().kind != TokenKind::kIdentifier) return Error("expected a name after '.'");
        node = Make(ExprKind::kAttribute, {node}, "", Peek().text);
        ++pos_;
      } else if (IsOp("[")) {
        ++pos_;
        EP_ASSIGN_OR_RETURN(NodePtr index, ParseExpr());
        EP_RETURN_IF_ERROR(Expect("]"));
        node = Make(ExprKind::kIndex, {node, index});
      } else if (IsOp("(")) {
        if (node->kind != ExprKind::kName) return Error("only named functions can be called");
        ++pos_;
        std::vector<NodePtr> args;
        while (!IsOp(")")) {
          EP_ASSIGN_OR_RETURN(NodePtr arg, ParseExpr());
          args.push_back(arg);
          if (!IsOp(",")) break;
          ++pos_;
        }
        EP_RETURN_IF_ERROR(Expect(")"));
        node = Make(ExprKind::kCall, std::move(args), "", node->name);
      } else {
        return node;
      }
    }
  }

  StatusOr<NodePtr> ParsePrimary() {
    const Token& token = Peek();
    if (token.kind == TokenKind::kNumber || token.kind == TokenKind::kString) {
      auto node = std::make_shared<ExprNode>();
      node->kind = ExprKind::kLiteral;
      node->value = token.value;
      ++pos_;
      return NodePtr(node);
    }
    if (token.kind == TokenKind::kIdentifier) {
      static constexpr std::string_view kReserved[] = {"if", "else", "and", "or", "not", "in", "for"};
      for (std::string_view word : kReserved) {
        if (token.text == word) return Error("unexpected '" + token.text + "'");
      }
      auto node = std::make_shared<ExprNode>();
      if (token.text == "true" || token.text == "True") {
        node->value = true;
      } else if (token.text == "false" || token.text == "False") {
        node->value = false;
      } else if (token.text == "null" || token.text == "None") {
        node->value = nullptr;
      } else {
        node->kind = ExprKind::kName;
        node->name = token.text;
      }
      ++pos_;
      return NodePtr(node);
    }
    if (IsOp("(")) {
      ++pos_;
      EP_ASSIGN_OR_RETURN(NodePtr inner, ParseExpr());
      EP_RETURN_IF_ERROR(Expect(")"));
      return inner;
    }
    if (IsOp("[")) return ParseListOrComprehension();
    if (token.kind == TokenKind::kEnd) return Error("unexpected end");
    return Error("unexpected '" + token.text + "'");
  }

  StatusOr<NodePtr> ParseListOrComprehension() {
    ++pos_;  // '['
    std::vector<NodePtr> items;
    if (IsOp("]")) {
      ++pos_;
      return Make(ExprKind::kList);
    }
    EP_ASSIGN_OR_RETURN(NodePtr first, ParseExpr());
    if (IsKeyword("for")) {
      ++pos_;
      if (Peek().kind != TokenKind::kIdentifier) return Error("expected a loop variable after 'for'");
      std::string variable = Peek().text;
      ++pos_;
      if (!IsKeyword("in")) return Error("expected 'in' after 'for " + variable + "'");
      ++pos_;
      EP_ASSIGN_OR_RETURN(NodePtr iterable, ParseOr());
      std::vector<NodePtr> children = {first, iterable};
      if (IsKeyword("if")) {
        ++pos_;
        EP_ASSIGN_OR_RETURN(NodePtr condition, ParseOr());
        children.push_back(condition);
      }
      EP_RETURN_IF_ERROR(Expect("]"));
      return Make(ExprKind::kComprehension, std::move(children), "", variable);
    }
    items.push_back(first);
    while (IsOp(",")) {
      ++pos_;
      if (IsOp("]")) break;
      EP_ASSIGN_OR_RETURN(NodePtr item, ParseExpr());
      items.push_back(item);
    }
    EP_RETURN_IF_ERROR(Expect("]"));
    return Make(ExprKind::kList, std::move(items));
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

StatusOr<Expression> Expression::Parse(std::string_view text) {
  Parser parser(text);
  EP_ASSIGN_OR_RETURN(auto root, parser.ParseAll());
  return Expression(std::string(text), std::move(root));
}

}  // namespace easyplan::schemas
