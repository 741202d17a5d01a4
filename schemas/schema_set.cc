#include "schemas/schema_set.h"

namespace easyplan::schemas {
namespace {
constexpr char kFamilyDir[] = "schemas/families";
constexpr char kTreeDir[] = "schemas/trees";

std::string Stem(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return name.ends_with(".yaml") ? name.substr(0, name.size() - 5) : "";
}
}  // namespace

StatusOr<const EasyDelSchema*> SchemaSet::EasyDel(const std::string& version) {
  EP_ASSIGN_OR_RETURN(const EasyDelVersions* versions, Versions());
  EP_ASSIGN_OR_RETURN(const EasyDelVersion* found, versions->Find(version));
  std::unique_ptr<EasyDelSchema>& slot = easydel_[found->name];
  if (!slot) {
    EP_ASSIGN_OR_RETURN(Document doc, source_.ReadDocument("schemas/easydel.yaml"));
    EP_ASSIGN_OR_RETURN(EasyDelSchema schema, ParseEasyDelSchema(doc, found->name, versions->Names()));
    slot = std::make_unique<EasyDelSchema>(std::move(schema));
  }
  return slot.get();
}

StatusOr<const DimKeys*> SchemaSet::SharedDimKeys() {
  if (!dim_keys_) {
    const std::string path = "schemas/dims.yaml";
    bool exists = false;
    for (const std::string& listed : source_.List("schemas")) exists = exists || listed == path;
    if (!exists) return BuiltinDimKeys();
    EP_ASSIGN_OR_RETURN(Document doc, source_.ReadDocument(path));
    EP_ASSIGN_OR_RETURN(DimKeys keys, ParseDimKeys(doc));
    dim_keys_ = std::make_unique<DimKeys>(std::move(keys));
  }
  return dim_keys_.get();
}

StatusOr<const EasyDelVersions*> SchemaSet::Versions() {
  if (!versions_) {
    EP_ASSIGN_OR_RETURN(Document doc, source_.ReadDocument("schemas/easydel_versions.yaml"));
    EP_ASSIGN_OR_RETURN(EasyDelVersions versions, EasyDelVersions::Parse(doc));
    versions_ = std::make_unique<EasyDelVersions>(std::move(versions));
  }
  return versions_.get();
}

StatusOr<const FamilySchema*> SchemaSet::Family(const std::string& model_type) {
  if (auto it = families_.find(model_type); it != families_.end()) {
    const FamilySchema* family = it->second.get();
    return family->alias_of.empty() ? family : Family(family->alias_of);
  }
  std::string path = std::string(kFamilyDir) + "/" + model_type + ".yaml";
  bool exists = false;
  for (const std::string& listed : source_.List(kFamilyDir)) exists = exists || listed == path;
  if (!exists) return static_cast<const FamilySchema*>(nullptr);
  EP_ASSIGN_OR_RETURN(Document doc, source_.ReadDocument(path));
  EP_ASSIGN_OR_RETURN(FamilySchema family, ParseFamilySchema(doc));
  if (family.model_type != model_type) {
    return Status::BadInput({source_.DisplayPath(path)},
                            "model_type '" + family.model_type + "' does not match the file name '" + model_type + "'");
  }
  if (!family.alias_of.empty()) {
    // One level: an alias of an alias would hide which file holds the architecture (and could loop).
    const std::string target_path = std::string(kFamilyDir) + "/" + family.alias_of + ".yaml";
    bool target_exists = false;
    for (const std::string& listed : source_.List(kFamilyDir)) target_exists = target_exists || listed == target_path;
    if (!target_exists || family.alias_of == model_type) {
      return Status::BadInput({source_.DisplayPath(path)}, "alias_of names '" + family.alias_of +
                                                               "', which is not another family under " + kFamilyDir);
    }
    EP_ASSIGN_OR_RETURN(Document target_doc, source_.ReadDocument(target_path));
    if (target_doc.root().is_object() && target_doc.root().contains("alias_of")) {
      return Status::BadInput({source_.DisplayPath(path)},
                              "alias_of names '" + family.alias_of + "', itself an alias; name the family it aliases");
    }
    EP_RETURN_IF_ERROR(Family(family.alias_of).status());
  }
  auto& slot = families_[model_type];
  slot = std::make_unique<FamilySchema>(std::move(family));
  return Family(model_type);
}

StatusOr<const NumericCheckDecl*> SchemaSet::NumericCheck(const std::string& model_type) {
  if (auto it = numeric_checks_.find(model_type); it != numeric_checks_.end()) return it->second.get();
  EP_ASSIGN_OR_RETURN(const FamilySchema* family, Family(model_type));  // validates the file
  std::unique_ptr<NumericCheckDecl> decl;
  if (family != nullptr) {
    // An alias's numeric check is its family's: read the file Family() resolved to.
    EP_ASSIGN_OR_RETURN(Document doc,
                        source_.ReadDocument(std::string(kFamilyDir) + "/" + family->model_type + ".yaml"));
    const Json& root = doc.root();
    if (auto block = root.find("numeric_check"); block != root.end() && !block->is_null()) {
      EP_ASSIGN_OR_RETURN(Document forwards, source_.ReadDocument("schemas/forwards.yaml"));
      EP_ASSIGN_OR_RETURN(NumericCheckDecl parsed, ParseNumericCheck(doc, *block, "/numeric_check", forwards));
      decl = std::make_unique<NumericCheckDecl>(std::move(parsed));
    }
  }
  auto& slot = numeric_checks_[model_type];
  slot = std::move(decl);
  return static_cast<const NumericCheckDecl*>(slot.get());
}

std::vector<std::string> SchemaSet::FamilyNames() const {
  std::vector<std::string> names;
  for (const std::string& path : source_.List(kFamilyDir)) {
    std::string stem = Stem(path);
    if (!stem.empty() && stem[0] != '_') names.push_back(stem);
  }
  return names;
}

StatusOr<const TreeTemplate*> SchemaSet::Tree(const std::string& model_type) {
  if (auto it = trees_.find(model_type); it != trees_.end()) return it->second.get();
  std::string path = std::string(kTreeDir) + "/" + model_type + ".yaml";
  std::string blocks_path = std::string(kTreeDir) + "/_blocks.yaml";
  bool exists = false;
  bool blocks_exist = false;
  for (const std::string& listed : source_.List(kTreeDir)) {
    exists = exists || listed == path;
    blocks_exist = blocks_exist || listed == blocks_path;
  }
  if (!exists) return static_cast<const TreeTemplate*>(nullptr);
  EP_ASSIGN_OR_RETURN(Document doc, source_.ReadDocument(path));
  Document blocks_doc(source_.DisplayPath(blocks_path), Json());  // no _blocks.yaml: no shared blocks
  if (blocks_exist) {
    EP_ASSIGN_OR_RETURN(blocks_doc, source_.ReadDocument(blocks_path));
  }
  EP_ASSIGN_OR_RETURN(TreeTemplate tree, ParseTreeTemplate(doc, blocks_doc));
  if (tree.model_type != model_type) {
    return Status::BadInput({source_.DisplayPath(path)},
                            "model_type '" + tree.model_type + "' does not match the file name '" + model_type + "'");
  }
  auto& slot = trees_[model_type];
  slot = std::make_unique<TreeTemplate>(std::move(tree));
  return slot.get();
}

std::vector<std::string> SchemaSet::TreeNames() const {
  std::vector<std::string> names;
  for (const std::string& path : source_.List(kTreeDir)) {
    std::string stem = Stem(path);
    if (!stem.empty() && stem[0] != '_') names.push_back(stem);
  }
  return names;
}

}  // namespace easyplan::schemas
