#ifndef EASYPLAN_SCHEMAS_NUMERIC_CHECK_SPEC_H_
#define EASYPLAN_SCHEMAS_NUMERIC_CHECK_SPEC_H_

// A family file's `numeric_check:` block (docs/SCHEMAS.md, docs/CHECK.md): which reference forward pass
// `easyplan check` runs for the family, and how it shrinks the model to a tiny one of the same structure
// (the keys the tiny config sets, each to a literal or to a named size that kernels/tiny_model.h computes
// from the mesh and the full model's dims). Parsed here; the names of forward passes and sizes are
// kernels' vocabulary, so kernels checks them and reports the entry's file and line.

#include <optional>
#include <string>
#include <vector>

#include "core/document.h"
#include "core/json.h"
#include "core/status.h"
#include "schemas/expression.h"

namespace easyplan::schemas {

/// One key the tiny config sets: to a literal value, or to a named tiny size.
struct TinySetting {
  std::string key;
  std::optional<Json> value;  ///< a literal (2, null, []), when `size` is empty
  std::string size;           ///< a named size ("hidden", "kv_heads", ...), else ""
  SourceLoc loc;              ///< the entry in the family file
};

/// The numeric check of one full model: the block with its conditions evaluated.
struct NumericCheckSpec {
  std::string forward;  ///< the reference forward pass: llama, moe, deepseek, gpt2, falcon, gpt_oss or llama4
  SourceLoc forward_loc;
  bool mixtral_names = false;  ///< MoE parameters named block_sparse_moe/experts/w1,w3,w2
  /// The model code's fixed choice, whatever the config says (Mixtral always renormalises the top-k
  /// routing weights and its config has no flag); nullopt: the config's norm_topk_prob.
  std::optional<bool> norm_topk_prob;
  std::vector<TinySetting> tiny;  ///< in the order the tiny config applies them
};

/// The block as the family file declares it: each setting may hold only when a condition over the full
/// model's resolved config does (`when: "layer_types != null"`).
struct NumericCheckDecl {
  struct Entry {
    TinySetting setting;
    std::optional<Expression> when;
  };
  std::string forward;
  SourceLoc forward_loc;
  bool mixtral_names = false;
  std::optional<bool> norm_topk_prob;
  std::vector<Entry> tiny;
};

/// Parses the `numeric_check` member of a family file's root (`pointer` is "/numeric_check"); errors
/// name the file and line.
StatusOr<NumericCheckDecl> ParseNumericCheck(const Document& doc, const Json& block, const std::string& pointer);

/// The block for one full model: the settings whose `when` holds over its resolved `config`, in order.
/// Errors: a condition that fails to evaluate (naming the family file and line).
StatusOr<NumericCheckSpec> NumericCheckFor(const NumericCheckDecl& decl, const Json& config);

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_NUMERIC_CHECK_SPEC_H_
