#ifndef EASYPLAN_SCHEMAS_EASYDEL_VERSION_H_
#define EASYPLAN_SCHEMAS_EASYDEL_VERSION_H_

// The EasyDeL versions easyplan describes (schemas/easydel_versions.yaml, `--easydel-version`): the
// commit each was read from and how it shards parameters.

#include <string>
#include <vector>

#include "core/document.h"
#include "core/json.h"
#include "core/status.h"

namespace easyplan::schemas {

/// How a version of EasyDeL gives parameters their specs.
enum class RuleSource {
  kTables,     ///< per-family regex tables (`get_partition_rules`, rules/<family>.yaml)
  kGenerated,  ///< `resolve_shardings_automatically` over module hooks (rules/auto_rules.h)
};

struct EasyDelVersion {
  std::string name;    ///< the short commit users write: "090a03b2"
  std::string commit;  ///< the full commit of erfanzar/EasyDeL
  std::string date;
  RuleSource rules = RuleSource::kTables;
  std::string doc;
};

struct EasyDelVersions {
  std::vector<EasyDelVersion> versions;
  std::string default_name;

  /// The version `name` names ("" is the default); BadInput naming `flag` and listing the known
  /// versions, with a did-you-mean, when none does.
  StatusOr<const EasyDelVersion*> Find(const std::string& name, const std::string& flag = "--easydel-version") const;
  std::vector<std::string> Names() const;
  static StatusOr<EasyDelVersions> Parse(const Document& doc);
};

/// The scope a data file's `when:` condition sees for `config` at EasyDeL version `version`: the config
/// with `easydel_version` bound (tree templates, forward variants). A non-object config or an empty
/// version is returned as it is.
Json VersionScope(Json config, const std::string& version);

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_EASYDEL_VERSION_H_
