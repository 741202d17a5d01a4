// Loading of schemas/trees/*.yaml into TreeTemplate, with file:line on every error.
#include <map>

#include "core/document.h"
#include "core/json_pointer.h"
#include "core/yaml_parse.h"
#include "schemas/schema_reader.h"
#include "schemas/tree_template.h"

namespace easyplan::schemas {
namespace {

// Blocks may use other blocks; this bounds the nesting so a cycle is an error, not a stack overflow.
constexpr int kMaxBlockDepth = 16;

struct BlockRef {
  const Json* items;
  std::string pointer;
  const Document* doc;
};

class TemplateParser {
 public:
  TemplateParser(const Document& doc, const Document& blocks_doc) : doc_(doc), blocks_doc_(blocks_doc) {
    AddBlocks(blocks_doc_);
    AddBlocks(doc_);  // the template's own blocks win
  }

  StatusOr<std::vector<TreeItem>> Items(const Document& doc, const Json& list, const std::string& pointer, int depth) {
    SchemaReader reader(doc);
    if (!list.is_array())
      return reader.Error(pointer, "expected a list of tensors, found " + std::string(JsonTypeName(list)));
    std::vector<TreeItem> items;
    for (size_t i = 0; i < list.size(); ++i) {
      std::string item_pointer = PointerToElement(pointer, i);
      const Json& entry = list[i];
      if (!entry.is_object())
        return reader.Error(item_pointer, "expected a mapping, found " + std::string(JsonTypeName(entry)));
      if (entry.contains("use")) {
        EP_ASSIGN_OR_RETURN(TreeItem item, Use(doc, entry, item_pointer, depth));
        items.push_back(std::move(item));
      } else if (entry.contains("tensors")) {
        EP_ASSIGN_OR_RETURN(auto group, Group(doc, entry, item_pointer, depth));
        items.push_back(TreeItem{nullptr, std::move(group)});
      } else {
        EP_ASSIGN_OR_RETURN(TensorTemplate tensor, Tensor(doc, entry, item_pointer));
        items.push_back(TreeItem{std::make_shared<const TensorTemplate>(std::move(tensor)), nullptr});
      }
    }
    return items;
  }

  StatusOr<std::shared_ptr<const GroupTemplate>> Group(const Document& doc, const Json& entry,
                                                       const std::string& pointer, int depth) {
    SchemaReader reader(doc);
    EP_RETURN_IF_ERROR(reader.CheckKeys(
        entry, pointer,
        {"for", "count", "when", "let", "scope", "layouts", "prefix", "easydel_prefix", "tensors", "doc"}));
    auto group = std::make_shared<GroupTemplate>();
    group->loc = doc.Locate(pointer);
    EP_ASSIGN_OR_RETURN(group->var, reader.String(entry, pointer, "for", false));
    EP_ASSIGN_OR_RETURN(group->count, OptionalExpr(reader, entry, pointer, "count"));
    if (group->var.empty() != !group->count.has_value()) {
      return reader.Error(pointer, "'for' and 'count' go together: a repeated group names its variable and its count");
    }
    EP_RETURN_IF_ERROR(Common(reader, entry, pointer, *group));
    EP_ASSIGN_OR_RETURN(group->items, Items(doc, entry["tensors"], pointer + "/tensors", depth));
    return std::shared_ptr<const GroupTemplate>(std::move(group));
  }

  StatusOr<TreeItem> Use(const Document& doc, const Json& entry, const std::string& pointer, int depth) {
    SchemaReader reader(doc);
    EP_RETURN_IF_ERROR(reader.CheckKeys(entry, pointer,
                                        {"use", "when", "let", "scope", "layouts", "prefix", "easydel_prefix", "doc"}));
    EP_ASSIGN_OR_RETURN(std::string name, reader.String(entry, pointer, "use", true));
    auto it = blocks_.find(name);
    if (it == blocks_.end()) {
      std::vector<std::string> known;
      for (const auto& [block, ref] : blocks_) known.push_back(block);
      std::string message = "unknown block '" + name + "'";
      if (auto suggestion = SuggestClosest(name, known)) message += " (did you mean '" + *suggestion + "'?)";
      return reader.Error(pointer + "/use", message);
    }
    if (depth >= kMaxBlockDepth) {
      return reader.Error(pointer + "/use", "blocks nest deeper than " + std::to_string(kMaxBlockDepth) +
                                                " levels (does block '" + name + "' use itself?)");
    }
    const BlockRef& ref = it->second;
    auto group = std::make_shared<GroupTemplate>();
    group->loc = doc.Locate(pointer);
    EP_RETURN_IF_ERROR(Common(reader, entry, pointer, *group));
    EP_ASSIGN_OR_RETURN(group->items, Items(*ref.doc, *ref.items, ref.pointer, depth + 1));
    return TreeItem{nullptr, std::shared_ptr<const GroupTemplate>(std::move(group))};
  }

  StatusOr<TensorTemplate> Tensor(const Document& doc, const Json& entry, const std::string& pointer) {
    SchemaReader reader(doc);
    EP_RETURN_IF_ERROR(reader.CheckKeys(entry, pointer,
                                        {"name", "shape", "when", "easydel_when", "layouts", "kind", "dtype", "role",
                                         "experts", "quantizable", "module", "easydel_link", "doc"}));
    TensorTemplate tensor;
    tensor.loc = doc.Locate(pointer);
    EP_ASSIGN_OR_RETURN(tensor.name, Name(reader, entry, pointer, "name"));
    if (tensor.name.text.empty()) return reader.Error(pointer, "missing required key 'name'");
    EP_ASSIGN_OR_RETURN(tensor.module, Name(reader, entry, pointer, "module"));
    EP_ASSIGN_OR_RETURN(tensor.easydel_link, Name(reader, entry, pointer, "easydel_link"));
    auto shape = entry.find("shape");
    if (shape == entry.end() || !shape->is_array()) return reader.Error(pointer, "expected 'shape': a list of dims");
    for (size_t d = 0; d < shape->size(); ++d) {
      const Json& dim = (*shape)[d];
      std::string text = dim.is_string() ? dim.get<std::string>() : dim.is_number_integer() ? dim.dump() : "";
      if (text.empty()) {
        return reader.Error(PointerToElement(pointer + "/shape", d), "expected an integer or an expression");
      }
      auto expr = Expression::Parse(text);
      if (!expr.ok()) return reader.Error(PointerToElement(pointer + "/shape", d), expr.status().diag().message);
      tensor.shape.push_back(*expr);
    }
    EP_ASSIGN_OR_RETURN(tensor.when, OptionalExpr(reader, entry, pointer, "when"));
    EP_ASSIGN_OR_RETURN(tensor.easydel_when, OptionalExpr(reader, entry, pointer, "easydel_when"));
    EP_ASSIGN_OR_RETURN(tensor.experts, OptionalExpr(reader, entry, pointer, "experts"));
    if (tensor.experts && tensor.name.text.find("{expert}") == std::string::npos) {
      return reader.Error(pointer + "/name", "a tensor with 'experts' must have '{expert}' in its name");
    }
    EP_RETURN_IF_ERROR(Layouts(reader, entry, pointer, tensor.in_hf, tensor.in_easydel));
    EP_ASSIGN_OR_RETURN(std::string kind, reader.String(entry, pointer, "kind", false));
    if (kind == "embedding") {
      tensor.kind = TensorKind::kEmbedding;
    } else if (kind == "layernorm") {
      tensor.kind = TensorKind::kLayerNorm;
    } else if (!kind.empty()) {
      return reader.Error(pointer + "/kind", "expected 'embedding' or 'layernorm', found '" + kind + "'");
    }
    EP_ASSIGN_OR_RETURN(std::string dtype, reader.String(entry, pointer, "dtype", false));
    if (!dtype.empty()) {
      tensor.dtype = ParseDType(dtype);
      if (!tensor.dtype) return reader.Error(pointer + "/dtype", "unknown dtype '" + dtype + "'");
    }
    EP_ASSIGN_OR_RETURN(std::string role, reader.String(entry, pointer, "role", false));
    if (role == "buffer") {
      tensor.role = TensorRole::kBuffer;
    } else if (!role.empty() && role != "parameter") {
      return reader.Error(pointer + "/role", "expected 'parameter' or 'buffer', found '" + role + "'");
    }
    if (auto it = entry.find("quantizable"); it != entry.end()) {
      if (!it->is_boolean()) return reader.Error(pointer + "/quantizable", "expected true or false");
      tensor.quantizable = it->get<bool>();
    }
    return tensor;
  }

 private:
  // An expression key that may also be written as a plain integer or boolean (`count: 2`, `when: false`).
  static StatusOr<std::optional<Expression>> OptionalExpr(const SchemaReader& reader, const Json& entry,
                                                          const std::string& pointer, const std::string& key) {
    auto it = entry.find(key);
    if (it == entry.end()) return std::optional<Expression>();
    if (!it->is_string() && !it->is_number_integer() && !it->is_boolean()) {
      return reader.Error(PointerToMember(pointer, key),
                          "expected an expression, an integer or a boolean, found " + std::string(JsonTypeName(*it)));
    }
    auto expr = Expression::Parse(it->is_string() ? it->get<std::string>() : it->dump());
    if (!expr.ok()) return reader.Error(PointerToMember(pointer, key), expr.status().diag().message);
    return std::optional<Expression>(*expr);
  }

  static Status Layouts(const SchemaReader& reader, const Json& entry, const std::string& pointer, bool& in_hf,
                        bool& in_easydel) {
    auto it = entry.find("layouts");
    if (it == entry.end()) return Status();
    if (!it->is_array() || it->empty()) return reader.Error(pointer + "/layouts", "expected a list: [hf], [easydel]");
    in_hf = in_easydel = false;
    for (const Json& layout : *it) {
      std::optional<Layout> parsed = layout.is_string() ? ParseLayout(layout.get<std::string>()) : std::nullopt;
      if (!parsed)
        return reader.Error(pointer + "/layouts", "expected 'hf' or 'easydel', found " + JsonForMessage(layout));
      (*parsed == Layout::kHf ? in_hf : in_easydel) = true;
    }
    return Status();
  }

  // The keys a group and a `use` share: when, let, scope, layouts, prefix, easydel_prefix.
  Status Common(const SchemaReader& reader, const Json& entry, const std::string& pointer, GroupTemplate& group) {
    EP_RETURN_IF_ERROR(Layouts(reader, entry, pointer, group.in_hf, group.in_easydel));
    EP_ASSIGN_OR_RETURN(group.when, OptionalExpr(reader, entry, pointer, "when"));
    EP_ASSIGN_OR_RETURN(group.scope, reader.String(entry, pointer, "scope", false));
    EP_ASSIGN_OR_RETURN(group.prefix, Name(reader, entry, pointer, "prefix"));
    EP_ASSIGN_OR_RETURN(group.easydel_prefix, Name(reader, entry, pointer, "easydel_prefix"));
    auto let = entry.find("let");
    if (let == entry.end()) return Status();
    if (!let->is_object()) return reader.Error(pointer + "/let", "expected a mapping of name: expression");
    for (const auto& [name, value] : let->items()) {
      std::string text = value.is_string() ? value.get<std::string>() : value.dump();
      auto expr = Expression::Parse(text);
      if (!expr.ok()) return reader.Error(PointerToMember(pointer + "/let", name), expr.status().diag().message);
      group.let.emplace_back(name, *expr);
    }
    return Status();
  }

  void AddBlocks(const Document& doc) {
    auto it = doc.root().find("blocks");
    if (it == doc.root().end() || !it->is_object()) return;
    for (const auto& [name, items] : it->items()) {
      blocks_[name] = BlockRef{&items, PointerToMember("/blocks", name), &doc};
    }
  }

  StatusOr<NameTemplate> Name(const SchemaReader& reader, const Json& entry, const std::string& pointer,
                              const std::string& key) {
    EP_ASSIGN_OR_RETURN(std::string text, reader.String(entry, pointer, key, false));
    auto name = ParseNameTemplate(text);
    if (!name.ok()) return reader.Error(PointerToMember(pointer, key), name.status().diag().message);
    return *name;
  }

  const Document& doc_;
  const Document& blocks_doc_;
  std::map<std::string, BlockRef> blocks_;
};

}  // namespace

StatusOr<NameTemplate> ParseNameTemplate(const std::string& text) {
  NameTemplate name;
  name.text = text;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t open = text.find('{', pos);
    if (open == std::string::npos) {
      name.pieces.push_back({text.substr(pos), std::nullopt});
      break;
    }
    if (open > pos) name.pieces.push_back({text.substr(pos, open - pos), std::nullopt});
    size_t close = text.find('}', open);
    if (close == std::string::npos) return Status::BadInput({}, "unclosed '{' in name '" + text + "'");
    std::string inner = text.substr(open + 1, close - open - 1);
    if (inner == "expert") {
      name.pieces.push_back({"{expert}", std::nullopt});  // expanded per expert, not evaluated
    } else {
      auto expr = Expression::Parse(inner);
      if (!expr.ok()) return Status::BadInput({}, "in name '" + text + "': " + expr.status().diag().message);
      name.pieces.push_back({"", *expr});
    }
    pos = close + 1;
  }
  return name;
}

StatusOr<TreeTemplate> ParseTreeTemplate(std::string_view text, const std::string& path, std::string_view blocks_text,
                                         const std::string& blocks_path) {
  EP_ASSIGN_OR_RETURN(Document doc, ParseYamlDocument(text, path));
  EP_ASSIGN_OR_RETURN(Document blocks_doc, ParseYamlDocument(blocks_text, blocks_path));
  return ParseTreeTemplate(doc, blocks_doc);
}

StatusOr<TreeTemplate> ParseTreeTemplate(const Document& doc, const Document& blocks_doc) {
  const std::string& path = doc.file();
  SchemaReader reader(doc);
  EP_RETURN_IF_ERROR(reader.CheckKeys(doc.root(), "", {"model_type", "doc", "blocks", "easydel_renames", "tensors"}));
  SchemaReader blocks_reader(blocks_doc);
  if (!blocks_doc.root().is_null()) EP_RETURN_IF_ERROR(blocks_reader.CheckKeys(blocks_doc.root(), "", {"blocks"}));
  TreeTemplate tree;
  tree.source = path;
  EP_ASSIGN_OR_RETURN(tree.model_type, reader.String(doc.root(), "", "model_type", true));
  auto tensors = doc.root().find("tensors");
  if (tensors == doc.root().end()) return reader.Error("", "missing required key 'tensors'");
  TemplateParser parser(doc, blocks_doc);
  EP_ASSIGN_OR_RETURN(tree.root.items, parser.Items(doc, *tensors, "/tensors", 0));
  tree.root.loc = SourceLoc{path};
  if (auto renames = doc.root().find("easydel_renames"); renames != doc.root().end()) {
    if (!renames->is_array()) return reader.Error("/easydel_renames", "expected a list of {from, to, when}");
    for (size_t i = 0; i < renames->size(); ++i) {
      const std::string pointer = PointerToElement("/easydel_renames", i);
      const Json& entry = (*renames)[i];
      EP_RETURN_IF_ERROR(reader.CheckKeys(entry, pointer, {"from", "to", "when", "doc"}));
      NameRename rename;
      EP_ASSIGN_OR_RETURN(rename.from, reader.String(entry, pointer, "from", true));
      EP_ASSIGN_OR_RETURN(rename.to, reader.String(entry, pointer, "to", true));
      if (rename.from.empty()) return reader.Error(PointerToMember(pointer, "from"), "expected a non-empty prefix");
      EP_ASSIGN_OR_RETURN(rename.when, reader.OptionalExpr(entry, pointer, "when"));
      rename.loc = doc.Locate(pointer);
      rename.loc.pointer.clear();
      tree.easydel_renames.push_back(std::move(rename));
    }
  }
  return tree;
}

}  // namespace easyplan::schemas
