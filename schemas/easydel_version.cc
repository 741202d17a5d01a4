#include "schemas/easydel_version.h"

#include "core/did_you_mean.h"
#include "core/json_pointer.h"
#include "schemas/schema_reader.h"

namespace easyplan::schemas {

std::vector<std::string> EasyDelVersions::Names() const {
  std::vector<std::string> names;
  for (const EasyDelVersion& version : versions) names.push_back(version.name);
  return names;
}

StatusOr<const EasyDelVersion*> EasyDelVersions::Find(const std::string& name, const std::string& flag) const {
  const std::string& wanted = name.empty() ? default_name : name;
  for (const EasyDelVersion& version : versions) {
    if (version.name == wanted || (wanted.size() >= 7 && version.commit.starts_with(wanted))) return &version;
  }
  std::string message = flag + " '" + wanted + "' is not a version easyplan describes";
  if (auto suggestion = SuggestClosest(wanted, Names())) message += " (did you mean '" + *suggestion + "'?)";
  return Status::BadInput({}, message, {"expected one of " + JoinQuoted(Names()) + " (default " + default_name + ")"});
}

StatusOr<EasyDelVersions> EasyDelVersions::Parse(const Document& doc) {
  SchemaReader reader(doc);
  const Json& root = doc.root();
  EP_RETURN_IF_ERROR(reader.CheckKeys(root, "", {"default", "versions"}));
  EasyDelVersions result;
  EP_ASSIGN_OR_RETURN(result.default_name, reader.String(root, "", "default", true));
  auto versions = root.find("versions");
  if (versions == root.end() || !versions->is_array() || versions->empty()) {
    return reader.Error("", "expected 'versions': a list of {name, commit, date, rules}");
  }
  for (size_t i = 0; i < versions->size(); ++i) {
    const std::string pointer = PointerToElement("/versions", i);
    const Json& entry = (*versions)[i];
    EP_RETURN_IF_ERROR(reader.CheckKeys(entry, pointer, {"name", "commit", "date", "rules", "doc"}));
    EasyDelVersion version;
    EP_ASSIGN_OR_RETURN(version.name, reader.String(entry, pointer, "name", true));
    EP_ASSIGN_OR_RETURN(version.commit, reader.String(entry, pointer, "commit", true));
    EP_ASSIGN_OR_RETURN(version.date, reader.String(entry, pointer, "date", true));
    EP_ASSIGN_OR_RETURN(version.doc, reader.String(entry, pointer, "doc", false));
    EP_ASSIGN_OR_RETURN(std::string rules, reader.String(entry, pointer, "rules", true));
    if (rules == "tables") {
      version.rules = RuleSource::kTables;
    } else if (rules == "generated") {
      version.rules = RuleSource::kGenerated;
    } else {
      return reader.Error(pointer + "/rules", "expected 'tables' or 'generated', found '" + rules + "'");
    }
    if (!version.commit.starts_with(version.name)) {
      return reader.Error(pointer + "/name", "'" + version.name + "' does not start commit " + version.commit);
    }
    result.versions.push_back(std::move(version));
  }
  bool default_known = false;
  for (const EasyDelVersion& version : result.versions) default_known |= version.name == result.default_name;
  if (!default_known) return reader.Error("/default", "'" + result.default_name + "' is not one of the versions");
  return result;
}

Json VersionScope(Json config, const std::string& version) {
  if (!version.empty() && config.is_object()) config["easydel_version"] = version;
  return config;
}

}  // namespace easyplan::schemas
