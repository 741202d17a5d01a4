#ifndef EASYPLAN_SCHEMAS_TREE_TEMPLATE_H_
#define EASYPLAN_SCHEMAS_TREE_TEMPLATE_H_

// A model family's parameter tree as data (schemas/trees/<model_type>.yaml, format in
// docs/TREES.md): every tensor's HuggingFace checkpoint name and torch-layout shape as expressions
// over the resolved config, with presence conditions. The EasyDeL names and shapes are not written
// down: they follow from the HF ones by EasyDeL's StateDictConverter rules (schemas/layout_convert.h),
// exactly as EasyDeL itself derives them when it loads a checkpoint.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/document.h"
#include "core/dtype.h"
#include "core/param_tree.h"
#include "core/status.h"
#include "schemas/expression.h"

namespace easyplan::schemas {

/// A name with `{expression}` placeholders ("model.layers.{i}."), parsed once at load.
struct NameTemplate {
  struct Piece {
    std::string literal;             // used when `expr` is empty
    std::optional<Expression> expr;  // evaluated to an integer or string
  };
  std::vector<Piece> pieces;
  std::string text;  // as written
};

/// How EasyDeL's converter treats a tensor (it decides by module type, which the checkpoint name
/// alone does not tell): an Embed module keeps its [V, H] weight as `embedding`; a LayerNorm's weight
/// becomes `scale`; any other key containing "weight" becomes `kernel` with its dims permuted.
enum class TensorKind { kAuto, kEmbedding, kLayerNorm };

/// One tensor (or, with `experts`, one tensor per routed expert).
struct TensorTemplate {
  NameTemplate name;                       // relative to the enclosing prefixes
  std::vector<Expression> shape;           // HF (torch) layout
  std::optional<Expression> when;          // present in both layouts when true
  std::optional<Expression> easydel_when;  // replaces `when` for the EasyDeL layout
  bool in_hf = true;                       // `layouts:` restriction
  bool in_easydel = true;
  TensorKind kind = TensorKind::kAuto;
  std::optional<DType> dtype;  // fixed dtype; default: the parameter dtype
  TensorRole role = TensorRole::kParameter;
  std::optional<Expression> experts;  // count: HF has one tensor per expert ("{expert}" in the
                                      // name), EasyDeL stacks them on a new leading axis
  bool quantizable = false;           // FP8 checkpoints store it as e4m3 + a block-scale tensor
  /// The kind of EasyDeL module that owns the EasyDeL-side tensor (`module:`, a name of
  /// rules/_module_kinds.yaml, placeholders allowed: "{'column_linear' if down_is_column else
  /// 'row_linear'}"): what EasyDeL's automatic rules (rules/auto_rules.h) read. Empty: not declared.
  NameTemplate module;
  /// An HF-only tensor whose EasyDeL counterpart is another, EasyDeL-only entry of the same group
  /// (`easydel_link:`, its name relative to the same prefixes): rules written for EasyDeL names give
  /// this tensor that entry's spec, dim for dim. gpt-oss's fused gate_up_proj [E, H, 2F] takes
  /// gate_proj's P(ep, None, tp) where 090a03b2 splits it. Empty: none.
  NameTemplate easydel_link;
  SourceLoc loc;
};

struct GroupTemplate;

/// One entry of a group: a tensor or a nested group (exactly one is set).
struct TreeItem {
  std::shared_ptr<const TensorTemplate> tensor;
  std::shared_ptr<const GroupTemplate> group;
};

/// A repeated or conditional block: `for: i, count: num_hidden_layers, prefix: "model.layers.{i}."`.
struct GroupTemplate {
  std::string var;  // loop variable; "" = not repeated
  std::optional<Expression> count;
  std::optional<Expression> when;
  std::vector<std::pair<std::string, Expression>> let;  // names bound for the body, in order (a
                                                        // block's parameters: `let: {qkv_bias: true}`)
  std::string scope;                                    // evaluate the body in this sub-config
                                                        // (gemma3's text_config), "" = unchanged
  bool in_hf = true;                                    // `layouts:` restriction for everything inside
  bool in_easydel = true;
  NameTemplate prefix;          // prepended to the names inside, both layouts
  NameTemplate easydel_prefix;  // additionally prepended for the EasyDeL layout (gpt2's
                                // checkpoint omits the module's "transformer." prefix)
  std::vector<TreeItem> items;
  SourceLoc loc;
};

/// One `easydel_renames:` entry: an EasyDeL name starting with `from` starts with `to` instead, when
/// `when` holds over the config. For module paths that differ from the checkpoint's by more than a
/// prefix: gemma3's checkpoint `language_model.model.layers` is EasyDeL's `model/language_model/layers`.
struct NameRename {
  std::string from;  // HF-style dotted prefix, as `prefix` and `name` compose it
  std::string to;
  std::optional<Expression> when;
  SourceLoc loc;
};

/// One family's template.
struct TreeTemplate {
  std::string model_type;
  GroupTemplate root;
  std::vector<NameRename> easydel_renames;  // first match wins; applied before the HF -> EasyDeL conversion
  std::string source;
};

/// Parses schemas/trees/<model_type>.yaml. `blocks_text` is schemas/trees/_blocks.yaml (shared named
/// tensor lists that a template pulls in with `- use: name`); a file's own `blocks:` take precedence.
/// The same from the parsed files (DataSource::ReadDocument); blocks_doc may have a null root.
StatusOr<TreeTemplate> ParseTreeTemplate(const Document& doc, const Document& blocks_doc);
StatusOr<TreeTemplate> ParseTreeTemplate(std::string_view text, const std::string& path, std::string_view blocks_text,
                                         const std::string& blocks_path);

/// Parses a name with `{expression}` placeholders.
StatusOr<NameTemplate> ParseNameTemplate(const std::string& text);

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_TREE_TEMPLATE_H_
