#include "schemas/numeric_check_spec.h"

#include "schemas/schema_reader.h"

namespace easyplan::schemas {
namespace {

StatusOr<std::optional<bool>> OptionalBool(const SchemaReader& reader, const Json& object, const std::string& pointer,
                                           const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return std::optional<bool>();
  if (!it->is_boolean()) return reader.Error(pointer + "/" + key, "expected true or false");
  return std::optional<bool>(it->get<bool>());
}

}  // namespace

StatusOr<NumericCheckDecl> ParseNumericCheck(const Document& doc, const Json& block, const std::string& pointer) {
  SchemaReader reader(doc);
  EP_RETURN_IF_ERROR(reader.CheckKeys(block, pointer, {"forward", "mixtral_names", "norm_topk_prob", "tiny"}));
  NumericCheckDecl decl;
  EP_ASSIGN_OR_RETURN(decl.forward, reader.String(block, pointer, "forward", true));
  decl.forward_loc = doc.Locate(pointer + "/forward");
  decl.forward_loc.pointer.clear();
  EP_ASSIGN_OR_RETURN(std::optional<bool> mixtral_names, OptionalBool(reader, block, pointer, "mixtral_names"));
  decl.mixtral_names = mixtral_names.value_or(false);
  EP_ASSIGN_OR_RETURN(decl.norm_topk_prob, OptionalBool(reader, block, pointer, "norm_topk_prob"));
  auto tiny = block.find("tiny");
  if (tiny == block.end() || !tiny->is_array()) {
    return reader.Error(pointer, "expected 'tiny': the list of keys the tiny config sets");
  }
  for (size_t i = 0; i < tiny->size(); ++i) {
    const std::string entry_pointer = pointer + "/tiny/" + std::to_string(i);
    const Json& entry = (*tiny)[i];
    EP_RETURN_IF_ERROR(reader.CheckKeys(entry, entry_pointer, {"key", "value", "size", "when", "doc"}));
    NumericCheckDecl::Entry parsed;
    TinySetting& setting = parsed.setting;
    EP_ASSIGN_OR_RETURN(setting.key, reader.String(entry, entry_pointer, "key", true));
    EP_ASSIGN_OR_RETURN(setting.size, reader.String(entry, entry_pointer, "size", false));
    if (auto value = entry.find("value"); value != entry.end()) setting.value = *value;
    if (setting.value.has_value() == !setting.size.empty()) {
      return reader.Error(
          entry_pointer, "expected one of 'value' (a literal) or 'size' (a named tiny size) for '" + setting.key + "'");
    }
    EP_ASSIGN_OR_RETURN(parsed.when, reader.OptionalExpr(entry, entry_pointer, "when"));
    setting.loc = doc.Locate(entry_pointer);
    setting.loc.pointer.clear();
    decl.tiny.push_back(std::move(parsed));
  }
  return decl;
}

StatusOr<NumericCheckSpec> NumericCheckFor(const NumericCheckDecl& decl, const Json& config) {
  NumericCheckSpec spec;
  spec.forward = decl.forward;
  spec.forward_loc = decl.forward_loc;
  spec.mixtral_names = decl.mixtral_names;
  spec.norm_topk_prob = decl.norm_topk_prob;
  for (const NumericCheckDecl::Entry& entry : decl.tiny) {
    if (entry.when) {
      StatusOr<Json> holds = entry.when->Evaluate(config);
      if (!holds.ok()) {
        return Status::BadInput(entry.setting.loc, "numeric_check: the condition of '" + entry.setting.key +
                                                       "' fails: " + holds.status().diag().message);
      }
      if (!IsTruthy(*holds)) continue;
    }
    spec.tiny.push_back(entry.setting);
  }
  return spec;
}

}  // namespace easyplan::schemas
