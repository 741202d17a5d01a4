// Evaluator for schema expressions: Python semantics on JSON values, with checked 64-bit integers.
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "core/checked_math.h"
#include "schemas/expression.h"
#include "schemas/expression_node.h"

namespace easyplan::schemas {
namespace {

bool IsInt(const Json& v) { return v.is_number_integer(); }
bool IsNumber(const Json& v) { return v.is_number(); }

class Evaluator {
 public:
  Evaluator(const Json& scope, const std::string& text) : scope_(scope), text_(text) {}

  StatusOr<Json> Eval(const ExprNode& node) {
    switch (node.kind) {
      case ExprKind::kLiteral:
        return node.value;
      case ExprKind::kName:
        return Lookup(node.name);
      case ExprKind::kAttribute:
        return EvalAttribute(node);
      case ExprKind::kIndex:
        return EvalIndex(node);
      case ExprKind::kCall:
        return EvalCall(node);
      case ExprKind::kList: {
        Json list = Json::array();
        for (const auto& child : node.children) {
          EP_ASSIGN_OR_RETURN(Json item, Eval(*child));
          list.push_back(std::move(item));
        }
        return list;
      }
      case ExprKind::kComprehension:
        return EvalComprehension(node);
      case ExprKind::kUnary:
        return EvalUnary(node);
      case ExprKind::kBinary:
        return EvalBinary(node);
      case ExprKind::kConditional: {
        EP_ASSIGN_OR_RETURN(Json condition, Eval(*node.children[0]));
        return Eval(*node.children[IsTruthy(condition) ? 1 : 2]);
      }
    }
    return Error("unknown expression node");
  }

 private:
  Status Error(const std::string& what) const { return Status::BadInput({}, "expression '" + text_ + "': " + what); }

  Json Lookup(const std::string& name) const {
    auto local = locals_.find(name);
    if (local != locals_.end()) return local->second;
    if (scope_.is_object()) {
      auto it = scope_.find(name);
      if (it != scope_.end()) return *it;
    }
    return nullptr;
  }

  StatusOr<Json> EvalAttribute(const ExprNode& node) {
    EP_ASSIGN_OR_RETURN(Json object, Eval(*node.children[0]));
    if (object.is_null()) return Json(nullptr);  // safe navigation: a.b is null when a is null
    if (!object.is_object()) {
      return Error("cannot read '." + node.name + "' of " + std::string(JsonTypeName(object)) + " " +
                   JsonForMessage(object));
    }
    auto it = object.find(node.name);
    return it == object.end() ? Json(nullptr) : *it;
  }

  StatusOr<Json> EvalIndex(const ExprNode& node) {
    EP_ASSIGN_OR_RETURN(Json container, Eval(*node.children[0]));
    EP_ASSIGN_OR_RETURN(Json index, Eval(*node.children[1]));
    if (container.is_object() && index.is_string()) {
      auto it = container.find(index.get<std::string>());
      return it == container.end() ? Json(nullptr) : *it;
    }
    if (!container.is_array() || !IsInt(index)) {
      return Error("cannot index " + std::string(JsonTypeName(container)) + " with " + JsonTypeName(index));
    }
    int64_t size = static_cast<int64_t>(container.size());
    int64_t i = index.get<int64_t>();
    if (i < 0) i += size;
    if (i < 0 || i >= size) {
      return Error("index " + std::to_string(index.get<int64_t>()) + " out of range for a list of " +
                   std::to_string(size));
    }
    return container[static_cast<size_t>(i)];
  }

  StatusOr<Json> EvalCall(const ExprNode& node) {
    std::vector<Json> args;
    for (const auto& child : node.children) {
      EP_ASSIGN_OR_RETURN(Json arg, Eval(*child));
      args.push_back(std::move(arg));
    }
    const std::string& f = node.name;
    auto arity = [&](size_t lo, size_t hi) -> Status {
      if (args.size() < lo || args.size() > hi) {
        return Error(f + "() takes " +
                     (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                     " arguments, got " + std::to_string(args.size()));
      }
      return Status();
    };
    if (f == "range") {
      EP_RETURN_IF_ERROR(arity(1, 2));
      for (const Json& a : args) {
        if (!IsInt(a)) return Error("range() needs integers, got " + std::string(JsonTypeName(a)));
      }
      int64_t lo = args.size() == 2 ? args[0].get<int64_t>() : 0;
      int64_t hi = args.back().get<int64_t>();
      Json list = Json::array();
      if (hi <= lo) return list;
      auto length = CheckedAdd(hi, -lo);
      if (!length || *length > Expression::kMaxRangeLength) {
        return Error("range(" + std::to_string(lo) + ", " + std::to_string(hi) + ") is longer than the limit of " +
                     std::to_string(Expression::kMaxRangeLength) + " elements");
      }
      EP_RETURN_IF_ERROR(Charge(*length));
      for (int64_t i = lo; i < hi; ++i) list.push_back(i);
      return list;
    }
    if (f == "len") {
      EP_RETURN_IF_ERROR(arity(1, 1));
      const Json& a = args[0];
      if (a.is_string()) return Json(static_cast<int64_t>(a.get_ref<const std::string&>().size()));
      if (a.is_array() || a.is_object()) return Json(static_cast<int64_t>(a.size()));
      return Error("len() of " + std::string(JsonTypeName(a)));
    }
    if (f == "min" || f == "max") {
      if (args.size() == 1 && args[0].is_array()) {
        Json list = args[0];
        args.assign(list.begin(), list.end());
      }
      if (args.empty()) return Error(f + "() of nothing");
      Json best = args[0];
      for (const Json& a : args) {
        if (!IsNumber(a)) return Error(f + "() needs numbers, got " + std::string(JsonTypeName(a)));
        bool better = f == "min" ? AsDouble(a) < AsDouble(best) : AsDouble(a) > AsDouble(best);
        if (better) best = a;
      }
      return best;
    }
    if (f == "int") {
      EP_RETURN_IF_ERROR(arity(1, 1));
      const Json& a = args[0];
      if (IsInt(a)) return a;
      if (a.is_boolean()) return Json(int64_t{a.get<bool>() ? 1 : 0});
      if (a.is_number_float()) {
        double d = std::trunc(a.get<double>());
        if (!std::isfinite(d) || d >= 9.2e18 || d <= -9.2e18) return Error("int() of " + a.dump() + " overflows");
        return Json(static_cast<int64_t>(d));
      }
      return Error("int() of " + std::string(JsonTypeName(a)));
    }
    if (f == "float") {
      EP_RETURN_IF_ERROR(arity(1, 1));
      if (!IsNumber(args[0])) return Error("float() of " + std::string(JsonTypeName(args[0])));
      return Json(AsDouble(args[0]));
    }
    return Error("unknown function '" + f + "' (known: range, len, min, max, int, float)");
  }

  StatusOr<Json> EvalComprehension(const ExprNode& node) {
    EP_ASSIGN_OR_RETURN(Json iterable, Eval(*node.children[1]));
    if (!iterable.is_array()) return Error("cannot iterate over " + std::string(JsonTypeName(iterable)));
    Json result = Json::array();
    std::optional<Json> saved;
    if (auto it = locals_.find(node.name); it != locals_.end()) saved = it->second;
    for (const Json& item : iterable) {
      locals_[node.name] = item;
      if (node.children.size() > 2) {
        EP_ASSIGN_OR_RETURN(Json keep, Eval(*node.children[2]));
        if (!IsTruthy(keep)) continue;
      }
      EP_ASSIGN_OR_RETURN(Json value, Eval(*node.children[0]));
      EP_RETURN_IF_ERROR(Charge(1));
      result.push_back(std::move(value));
    }
    if (saved) {
      locals_[node.name] = *saved;
    } else {
      locals_.erase(node.name);
    }
    return result;
  }

  StatusOr<Json> EvalUnary(const ExprNode& node) {
    EP_ASSIGN_OR_RETURN(Json operand, Eval(*node.children[0]));
    if (node.op == "not") return Json(!IsTruthy(operand));
    if (IsInt(operand)) {
      int64_t v = operand.get<int64_t>();
      if (v == std::numeric_limits<int64_t>::min()) return Error("integer overflow in negation");
      return Json(-v);
    }
    if (operand.is_number_float()) return Json(-operand.get<double>());
    return Error("cannot negate " + std::string(JsonTypeName(operand)));
  }

  static double AsDouble(const Json& v) {
    return v.is_number_float() ? v.get<double>() : static_cast<double>(v.get<int64_t>());
  }

  static bool Equal(const Json& a, const Json& b) {
    if (IsNumber(a) && IsNumber(b)) {
      if (IsInt(a) && IsInt(b)) return a.get<int64_t>() == b.get<int64_t>();
      return AsDouble(a) == AsDouble(b);
    }
    if (a.is_array() && b.is_array()) {
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!Equal(a[i], b[i])) return false;
      }
      return true;
    }
    return a == b;
  }

  StatusOr<Json> EvalBinary(const ExprNode& node) {
    const std::string& op = node.op;
    EP_ASSIGN_OR_RETURN(Json left, Eval(*node.children[0]));
    if (op == "and") return IsTruthy(left) ? Eval(*node.children[1]) : StatusOr<Json>(left);
    if (op == "or") return IsTruthy(left) ? StatusOr<Json>(left) : Eval(*node.children[1]);
    EP_ASSIGN_OR_RETURN(Json right, Eval(*node.children[1]));
    if (op == "==") return Json(Equal(left, right));
    if (op == "!=") return Json(!Equal(left, right));
    if (op == "in" || op == "not in") {
      bool found = false;
      if (right.is_array()) {
        for (const Json& item : right) found = found || Equal(item, left);
      } else if (right.is_string() && left.is_string()) {
        found = right.get_ref<const std::string&>().find(left.get_ref<const std::string&>()) != std::string::npos;
      } else if (right.is_object() && left.is_string()) {
        found = right.contains(left.get<std::string>());
      } else {
        return Error("'" + op + "' needs a list, string or object on the right, got " + JsonTypeName(right));
      }
      return Json(op == "in" ? found : !found);
    }
    if (op == "<" || op == "<=" || op == ">" || op == ">=") return Compare(op, left, right);
    return Arithmetic(op, left, right);
  }

  StatusOr<Json> Compare(const std::string& op, const Json& a, const Json& b) {
    int order = 0;
    if (IsNumber(a) && IsNumber(b)) {
      if (IsInt(a) && IsInt(b)) {
        order = a.get<int64_t>() < b.get<int64_t>() ? -1 : (a.get<int64_t>() > b.get<int64_t>() ? 1 : 0);
      } else {
        order = AsDouble(a) < AsDouble(b) ? -1 : (AsDouble(a) > AsDouble(b) ? 1 : 0);
      }
    } else if (a.is_string() && b.is_string()) {
      order = a.get_ref<const std::string&>().compare(b.get_ref<const std::string&>());
      order = order < 0 ? -1 : (order > 0 ? 1 : 0);
    } else {
      return Error("cannot compare " + std::string(JsonTypeName(a)) + " " + JsonForMessage(a) + " " + op + " " +
                   JsonTypeName(b) + " " + JsonForMessage(b));
    }
    if (op == "<") return Json(order < 0);
    if (op == "<=") return Json(order <= 0);
    if (op == ">") return Json(order > 0);
    return Json(order >= 0);
  }

  StatusOr<Json> Arithmetic(const std::string& op, const Json& a, const Json& b) {
    if (op == "+" && a.is_string() && b.is_string()) return Json(a.get<std::string>() + b.get<std::string>());
    if (op == "+" && a.is_array() && b.is_array()) {
      if (a.size() + b.size() > static_cast<size_t>(Expression::kMaxRangeLength)) return Error("list too long");
      Json joined = a;
      for (const Json& item : b) joined.push_back(item);
      return joined;
    }
    if (!IsNumber(a) || !IsNumber(b)) {
      return Error("cannot apply '" + op + "' to " + JsonTypeName(a) + " " + JsonForMessage(a) + " and " +
                   JsonTypeName(b) + " " + JsonForMessage(b));
    }
    if (IsInt(a) && IsInt(b) && op != "/") {
      int64_t x = a.get<int64_t>(), y = b.get<int64_t>();
      std::optional<int64_t> r;
      if (op == "+") r = CheckedAdd(x, y);
      if (op == "-") r = (y == std::numeric_limits<int64_t>::min()) ? std::nullopt : CheckedAdd(x, -y);
      if (op == "*") r = CheckedMul(x, y);
      if (op == "//" || op == "%") {
        if (y == 0) return Error("integer division by zero (" + std::to_string(x) + " " + op + " 0)");
        if (x == std::numeric_limits<int64_t>::min() && y == -1) return Error("integer overflow");
        int64_t q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {  // Python floors toward negative infinity
          q -= 1;
          m += y;
        }
        r = op == "//" ? q : m;
      }
      if (!r) return Error("integer overflow in " + std::to_string(x) + " " + op + " " + std::to_string(y));
      return Json(*r);
    }
    const double x = AsDouble(a), y = AsDouble(b);
    if (op != "+" && op != "-" && op != "*" && y == 0.0) return Error("division by zero");
    const double r = op == "+"    ? x + y
                     : op == "-"  ? x - y
                     : op == "*"  ? x * y
                     : op == "/"  ? x / y
                     : op == "//" ? std::floor(x / y)
                                  : x - std::floor(x / y) * y;
    // Python gives inf here; JSON has none, and every output that shows the config is JSON or YAML read
    // back as JSON (core/emit.h refuses non-finite numbers as a bug), so it is an error naming the operands.
    if (!std::isfinite(r)) {
      return Error("float overflow in " + JsonForMessage(a) + " " + op + " " + JsonForMessage(b));
    }
    return Json(r);
  }

  // Every list element an evaluation builds is charged here, so nested comprehensions cannot
  // allocate more than kMaxRangeLength * 4 elements in total.
  Status Charge(int64_t elements) {
    built_elements_ += elements;
    if (built_elements_ > 4 * Expression::kMaxRangeLength) {
      return Error("builds more than " + std::to_string(4 * Expression::kMaxRangeLength) + " list elements");
    }
    return Status();
  }

  const Json& scope_;
  const std::string& text_;
  std::map<std::string, Json> locals_;
  int64_t built_elements_ = 0;
};

}  // namespace

bool IsTruthy(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return false;
    case Json::value_t::boolean:
      return value.get<bool>();
    case Json::value_t::number_integer:
      return value.get<int64_t>() != 0;
    case Json::value_t::number_unsigned:
      return value.get<uint64_t>() != 0;
    case Json::value_t::number_float:
      return value.get<double>() != 0.0;
    case Json::value_t::string:
      return !value.get_ref<const std::string&>().empty();
    case Json::value_t::array:
    case Json::value_t::object:
      return !value.empty();
    default:
      return true;
  }
}

StatusOr<Json> Expression::Evaluate(const Json& scope) const {
  Evaluator evaluator(scope, text_);
  return evaluator.Eval(*root_);
}

}  // namespace easyplan::schemas
