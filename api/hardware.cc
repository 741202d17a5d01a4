#include "api/hardware.h"

#include <algorithm>
#include <optional>

#include "api/config_input.h"
#include "core/did_you_mean.h"
#include "planner/memory.h"

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

StatusOr<step::HardwareProfile> LoadHardwareProfile(const Environment& env, const std::string& name_or_file,
                                                    std::vector<Diag>* duplicate_keys) {
  if (name_or_file.empty()) return Status::BadInput({}, "--hardware is empty: expected a profile name or a YAML file");
  if (IsHardwareFile(name_or_file)) {
    // A user's profile: the same format as the built-in ones (LoadOverridesDocument reads YAML by suffix).
    EP_ASSIGN_OR_RETURN(Document doc, LoadOverridesDocument(env, name_or_file));
    if (duplicate_keys != nullptr) *duplicate_keys = doc.DuplicateKeyWarnings();
    return step::ParseHardwareProfile(doc, StemOf(name_or_file));
  }
  const std::vector<std::string> names = HardwareNames(env);
  for (const std::string& name : names) {
    if (name != name_or_file) continue;
    const schemas::DataSource data = env.Data();
    EP_ASSIGN_OR_RETURN(Document doc, data.ReadDocument(std::string(kHardwareDir) + "/" + name + ".yaml"));
    return step::ParseHardwareProfile(doc, name);
  }
  // A memory-only entry of the catalogue (schemas/devices.yaml) budgets memory but has no compute figures.
  EP_ASSIGN_OR_RETURN(const Document devices_doc, env.Data().ReadDocument("schemas/devices.yaml"));
  EP_ASSIGN_OR_RETURN(const std::vector<planner::DeviceKind> devices, planner::ParseDeviceTable(devices_doc));
  for (const planner::DeviceKind& device : devices) {
    if (device.name != name_or_file) continue;
    std::vector<std::string> notes;
    if (device.profiles.empty()) {
      notes.push_back("no profile of this part is bundled: give a profile file (docs/COST.md, \"Hardware profiles\")");
    } else {
      notes.push_back(std::string(device.profiles.size() == 1 ? "the profile of its part: " : "it could mean: ") +
                      JoinQuoted(device.profiles) + (device.note.empty() ? "" : " (" + device.note + ")"));
    }
    std::string message = "--hardware '" + name_or_file + "' (" + device.description +
                          ") has memory figures only: it budgets memory but cannot price a step (no compute figures)";
    if (device.profiles.size() == 1) message += " (did you mean '" + device.profiles[0] + "'?)";
    return Status::BadInput({}, message, notes);
  }
  std::string message = "--hardware '" + name_or_file + "' is not a known hardware profile";
  // A part named without its variant ("h100" for "h100-sxm", "tpu-v5" for "tpu-v5e") before the
  // nearest spelling ("h200", "tpu-v4").
  std::optional<std::string> suggestion;
  for (const std::string& name : names) {
    if (!suggestion && name_or_file.size() >= 3 && name.starts_with(name_or_file)) suggestion = name;
  }
  if (!suggestion) suggestion = SuggestClosest(name_or_file, names);
  if (suggestion) message += " (did you mean '" + *suggestion + "'?)";
  std::vector<std::string> device_names;
  for (const planner::DeviceKind& device : devices) device_names.push_back(device.name);
  return Status::BadInput(
      {}, message,
      {"profiles: " + JoinQuoted(names),
       "memory-only accelerators (schemas/devices.yaml; they budget memory, not a step): " + JoinQuoted(device_names),
       "or give a profile file (a path with '/' or ending in .yaml; docs/COST.md describes the "
       "format)"});
}

}  // namespace easyplan::api
