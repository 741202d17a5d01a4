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
#include "schemas/forward_structure.h"

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
  std::string forward;  ///< the schemas/forwards.yaml structure the family's forward pass starts from
  SourceLoc forward_loc;
  ForwardStructure structure;     ///< with the family's overrides and the variant the config selects
  std::vector<TinySetting> tiny;  ///< in the order the tiny config applies them
  /// The key that sets how many experts a token takes, in the tiny config's terms (`ffn_config.moe_top_k`
  /// for DBRX, `text_config.num_experts_per_tok` for a multimodal model): check's memory comparison sets
  /// it to the expert count, as the reference computes every expert.
  std::string top_k_key = "num_experts_per_tok";
};

/// The block as the family file declares it: each setting may hold only when a condition over the full
/// model's resolved config does (`when: "layer_types != null"`).
struct NumericCheckDecl {
  struct Entry {
    TinySetting setting;
    std::optional<Expression> when;
  };
  /// A structure the forward takes instead when `when` holds over the resolved config (the first that holds).
  struct Variant {
    Expression when;
    ForwardStructure structure;
    SourceLoc loc;
  };
  std::string forward;
  SourceLoc forward_loc;
  ForwardStructure structure;
  std::vector<Variant> variants;
  std::vector<Entry> tiny;
  std::string top_k_key = "num_experts_per_tok";  ///< `top_k_key:` (NumericCheckSpec::top_k_key)
  /// A family whose forward the structures cannot express: the trait it lacks (`missing:`), with no
  /// forward or tiny keys. check and cost name it instead of running.
  std::string missing;
};

/// Parses the `numeric_check` member of a family file's root (`pointer` is "/numeric_check"). Its
/// `forward` is a structure of schemas/forwards.yaml (`forwards`) by name, or a mapping that `extends`
/// one with overrides and `variants` ({when, set}). Or the block is `{missing: "the trait it lacks"}`.
/// Errors name the file and line.
StatusOr<NumericCheckDecl> ParseNumericCheck(const Document& doc, const Json& block, const std::string& pointer,
                                             const Document& forwards);

/// The block for one full model: the settings whose `when` holds over its resolved `config`, in order.
/// Errors: a condition that fails to evaluate (naming the family file and line).
StatusOr<NumericCheckSpec> NumericCheckFor(const NumericCheckDecl& decl, const Json& config);

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_NUMERIC_CHECK_SPEC_H_
