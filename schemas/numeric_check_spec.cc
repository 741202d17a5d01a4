#include "schemas/numeric_check_spec.h"

#include "schemas/schema_reader.h"

namespace easyplan::schemas {
namespace {

// `forward:` by name, or {extends: NAME, <overrides>, variants: [{when, set}]}.
Status ParseForward(const Document& doc, const Json& block, const std::string& pointer, const Document& forwards,
                    NumericCheckDecl* decl) {
  SchemaReader reader(doc);
  const std::string forward_pointer = pointer + "/forward";
  auto forward = block.find("forward");
  if (forward == block.end()) return reader.Error(pointer, "missing required key 'forward'");
  decl->forward_loc = doc.Locate(forward_pointer);
  decl->forward_loc.pointer.clear();
  if (forward->is_string()) {
    decl->forward = forward->get<std::string>();
    EP_ASSIGN_OR_RETURN(decl->structure, NamedForwardStructure(forwards, decl->forward, decl->forward_loc));
    return Status();
  }
  if (!forward->is_object()) {
    return reader.Error(forward_pointer,
                        "expected a structure of schemas/forwards.yaml by name, or a mapping that "
                        "extends one, found " +
                            std::string(JsonTypeName(*forward)));
  }
  EP_ASSIGN_OR_RETURN(decl->forward, reader.String(*forward, forward_pointer, "extends", true));
  SourceLoc extends_loc = doc.Locate(forward_pointer + "/extends");
  extends_loc.pointer.clear();
  EP_ASSIGN_OR_RETURN(decl->structure, NamedForwardStructure(forwards, decl->forward, extends_loc));
  Json overrides = *forward;
  overrides.erase("variants");
  EP_RETURN_IF_ERROR(ApplyForwardStructure(doc, overrides, forward_pointer, &decl->structure));
  auto variants = forward->find("variants");
  if (variants == forward->end()) return Status();
  if (!variants->is_array()) return reader.Error(forward_pointer + "/variants", "expected a list of {when, set}");
  for (size_t i = 0; i < variants->size(); ++i) {
    const std::string variant_pointer = forward_pointer + "/variants/" + std::to_string(i);
    const Json& entry = (*variants)[i];
    EP_RETURN_IF_ERROR(reader.CheckKeys(entry, variant_pointer, {"when", "set", "doc"}));
    EP_ASSIGN_OR_RETURN(Expression when, reader.RequiredExpr(entry, variant_pointer, "when"));
    NumericCheckDecl::Variant variant{std::move(when), decl->structure, doc.Locate(variant_pointer)};
    variant.loc.pointer.clear();
    auto set = entry.find("set");
    if (set == entry.end()) return reader.Error(variant_pointer, "missing required key 'set'");
    EP_RETURN_IF_ERROR(ApplyForwardStructure(doc, *set, variant_pointer + "/set", &variant.structure));
    decl->variants.push_back(std::move(variant));
  }
  return Status();
}

}  // namespace

StatusOr<NumericCheckDecl> ParseNumericCheck(const Document& doc, const Json& block, const std::string& pointer,
                                             const Document& forwards) {
  SchemaReader reader(doc);
  NumericCheckDecl decl;
  if (block.is_object() && block.contains("missing")) {
    EP_RETURN_IF_ERROR(reader.CheckKeys(block, pointer, {"missing"}));
    EP_ASSIGN_OR_RETURN(decl.missing, reader.String(block, pointer, "missing", true));
    return decl;
  }
  EP_RETURN_IF_ERROR(reader.CheckKeys(block, pointer, {"forward", "tiny", "top_k_key", "missing"}));
  EP_RETURN_IF_ERROR(ParseForward(doc, block, pointer, forwards, &decl));
  if (block.contains("top_k_key")) {
    EP_ASSIGN_OR_RETURN(decl.top_k_key, reader.String(block, pointer, "top_k_key", true));
  }
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
  spec.structure = decl.structure;
  spec.top_k_key = decl.top_k_key;
  for (const NumericCheckDecl::Variant& variant : decl.variants) {
    StatusOr<Json> holds = variant.when.Evaluate(config);
    if (!holds.ok()) {
      return Status::BadInput(
          variant.loc, "numeric_check: the condition of a forward variant fails: " + holds.status().diag().message);
    }
    if (IsTruthy(*holds)) {
      spec.structure = variant.structure;
      break;
    }
  }
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
