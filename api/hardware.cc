#include "api/hardware.h"

#include <algorithm>
#include <optional>

#include "api/config_input.h"
#include "core/did_you_mean.h"

namespace easyplan::api {
namespace {

constexpr const char* kHardwareDir = "schemas/hardware";

// "schemas/hardware/tpu-v5p.yaml" -> "tpu-v5p"; also for a user's file ("../my/gpu.yml" -> "gpu").
std::string StemOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  std::string file = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = file.rfind('.');
  return dot == std::string::npos || dot == 0 ? file : file.substr(0, dot);
}

}  // namespace

bool IsHardwareFile(const std::string& name_or_file) {
  return name_or_file.find('/') != std::string::npos || name_or_file.ends_with(".yaml") ||
         name_or_file.ends_with(".yml");
}

std::vector<std::string> HardwareNames(const Environment& env) {
  std::vector<std::string> names;
  for (const std::string& path : env.Data().List(kHardwareDir)) {
    if (path.ends_with(".yaml")) names.push_back(StemOf(path));
  }
  return names;
}

StatusOr<planner::HardwareProfile> LoadHardwareProfile(const Environment& env, const std::string& name_or_file,
                                                       std::vector<Diag>* duplicate_keys) {
  if (name_or_file.empty()) return Status::BadInput({}, "--hardware is empty: expected a profile name or a YAML file");
  if (IsHardwareFile(name_or_file)) {
    // A user's profile: the same format as the built-in ones (LoadOverridesDocument reads YAML by suffix).
    EP_ASSIGN_OR_RETURN(Document doc, LoadOverridesDocument(env, name_or_file));
    if (duplicate_keys != nullptr) *duplicate_keys = doc.DuplicateKeyWarnings();
    return planner::ParseHardwareProfile(doc, StemOf(name_or_file));
  }
  const std::vector<std::string> names = HardwareNames(env);
  for (const std::string& name : names) {
    if (name != name_or_file) continue;
    const schemas::DataSource data = env.Data();
    EP_ASSIGN_OR_RETURN(Document doc, data.ReadDocument(std::string(kHardwareDir) + "/" + name + ".yaml"));
    return planner::ParseHardwareProfile(doc, name);
  }
  std::string message = "--hardware '" + name_or_file + "' is not a known hardware profile";
  // A device of schemas/devices.yaml ("h100-80g": a part and its memory) names its part: the profiles of
  // that part come first ("h100-sxm"), not the nearest spelling ("a100-80g", another GPU).
  std::string part = name_or_file;
  if (const size_t dash = part.rfind('-'); dash != std::string::npos && dash + 2 < part.size() && part.back() == 'g' &&
                                           std::all_of(part.begin() + static_cast<std::ptrdiff_t>(dash) + 1,
                                                       part.end() - 1, [](char c) { return c >= '0' && c <= '9'; })) {
    part.resize(dash);
  }
  // A part named without its variant ("h100" for "h100-sxm", "tpu-v5" for "tpu-v5e") before the
  // nearest spelling ("h200", "tpu-v4").
  std::optional<std::string> suggestion;
  for (const std::string& name : names) {
    if (!suggestion && part.size() >= 3 && name.starts_with(part)) suggestion = name;
  }
  if (!suggestion) suggestion = SuggestClosest(name_or_file, names);
  if (suggestion) message += " (did you mean '" + *suggestion + "'?)";
  return Status::BadInput({}, message,
                          {"profiles: " + JoinQuoted(names),
                           "or give a profile file (a path with '/' or ending in .yaml; docs/COST.md describes the "
                           "format)"});
}

}  // namespace easyplan::api
