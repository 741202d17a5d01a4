#ifndef EASYPLAN_SCHEMAS_EXPRESSION_NODE_H_
#define EASYPLAN_SCHEMAS_EXPRESSION_NODE_H_

// Internal: the syntax tree shared by the expression parser and evaluator.
#include <memory>
#include <string>
#include <vector>

#include "core/json.h"

namespace easyplan::schemas {

enum class ExprKind {
  kLiteral,        // value
  kName,           // name
  kAttribute,      // children[0].name
  kIndex,          // children[0][children[1]]
  kCall,           // name(children...)
  kList,           // [children...]
  kComprehension,  // [children[0] for name in children[1] (if children[2])]
  kUnary,          // op children[0]      ("-", "not")
  kBinary,         // children[0] op children[1]
  kConditional,    // children[1] if children[0] else children[2]
};

struct ExprNode {
  ExprKind kind = ExprKind::kLiteral;
  Json value;        // kLiteral
  std::string name;  // kName, kAttribute, kCall, kComprehension (loop variable)
  std::string op;    // kUnary, kBinary
  std::vector<std::shared_ptr<const ExprNode>> children;
};

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_EXPRESSION_NODE_H_
