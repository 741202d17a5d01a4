#ifndef EASYPLAN_SCHEMAS_SCHEMA_SET_H_
#define EASYPLAN_SCHEMAS_SCHEMA_SET_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "schemas/data_source.h"
#include "schemas/easydel_version.h"
#include "schemas/numeric_check_spec.h"
#include "schemas/schema.h"
#include "schemas/tree_template.h"

namespace easyplan::schemas {

/// The schemas of one run, parsed on first use (a resolve touches three or four of the files, so
/// nothing else is parsed). Not thread-safe; one per Context.
class SchemaSet {
 public:
  explicit SchemaSet(DataSource source) : source_(std::move(source)) {}

  /// schemas/easydel.yaml as EasyDeL `version` has it ("" is the default version).
  StatusOr<const EasyDelSchema*> EasyDel(const std::string& version);
  /// schemas/dims.yaml: the config keys each canonical dim is read from, shared by every family. A
  /// --schemas-dir without the file reads the built-in one (BuiltinDimKeys).
  StatusOr<const DimKeys*> SharedDimKeys();
  /// schemas/easydel_versions.yaml: the EasyDeL versions easyplan describes.
  StatusOr<const EasyDelVersions*> Versions();

  /// schemas/families/<model_type>.yaml; nullptr (not an error) when there is no such family. An alias
  /// file (`alias_of: deepseek_v3`) gives the family it names: kimi_k2's schema is deepseek_v3's.
  StatusOr<const FamilySchema*> Family(const std::string& model_type);

  /// The `numeric_check:` block of schemas/families/<model_type>.yaml (schemas/numeric_check_spec.h);
  /// nullptr (not an error) when there is no such family or it declares none. Parsed on first use, apart
  /// from Family(): only `check` reads it.
  StatusOr<const NumericCheckDecl*> NumericCheck(const std::string& model_type);

  /// Every family name, sorted (file stems not starting with '_').
  std::vector<std::string> FamilyNames() const;

  /// schemas/trees/<model_type>.yaml (with the shared schemas/trees/_blocks.yaml); nullptr (not an
  /// error) when the family has no parameter-tree template.
  StatusOr<const TreeTemplate*> Tree(const std::string& model_type);

  /// Every model_type with a tree template, sorted.
  std::vector<std::string> TreeNames() const;

 private:
  DataSource source_;
  std::map<std::string, std::unique_ptr<EasyDelSchema>> easydel_;  // by version
  std::unique_ptr<EasyDelVersions> versions_;
  std::unique_ptr<DimKeys> dim_keys_;
  std::map<std::string, std::unique_ptr<FamilySchema>> families_;            // alias files too, by their own name
  std::map<std::string, std::unique_ptr<NumericCheckDecl>> numeric_checks_;  // null: the family has none
  std::map<std::string, std::unique_ptr<TreeTemplate>> trees_;
};

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_SCHEMA_SET_H_
