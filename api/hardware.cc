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

StatusOr<std::vector<step::HardwareProfile>> LoadHardwareCatalogue(const Environment& env) {
  const schemas::DataSource data = env.Data();
  std::vector<step::HardwareProfile> out;
  for (const std::string& path : data.List(kHardwareDir)) {
    if (!path.ends_with(".yaml")) continue;
    EP_ASSIGN_OR_RETURN(Document doc, data.ReadDocument(path));
    EP_ASSIGN_OR_RETURN(step::HardwareProfile entry, step::ParseHardwareProfile(doc, StemOf(path)));
    out.push_back(std::move(entry));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::vector<std::string> HardwareNames(const Environment& env) {
  std::vector<std::string> names;
  StatusOr<std::vector<step::HardwareProfile>> catalogue = LoadHardwareCatalogue(env);
  if (!catalogue.ok()) return names;
  for (const step::HardwareProfile& entry : *catalogue) {
    if (!entry.memory_only) names.push_back(entry.name);
  }
  return names;
}

namespace {

// A memory-only accelerator asked to price a step: its part's profiles, as a did-you-mean.
Status MemoryOnlyError(const step::HardwareProfile& entry) {
  std::vector<std::string> notes;
  if (entry.profiles.empty()) {
    notes.push_back("no profile of this part is bundled: give a profile file (docs/COST.md, \"Hardware profiles\")");
  } else {
    notes.push_back(std::string(entry.profiles.size() == 1 ? "the profile of its part: " : "it could mean: ") +
                    JoinQuoted(entry.profiles) + (entry.note.empty() ? "" : " (" + entry.note + ")"));
  }
  std::string message = "--hardware '" + entry.name + "' (" + entry.description +
                        ") has memory figures only: it budgets memory but cannot price a step (no compute figures)";
  if (entry.profiles.size() == 1) message += " (did you mean '" + entry.profiles[0] + "'?)";
  return Status::BadInput({}, message, notes);
}

}  // namespace

StatusOr<step::HardwareProfile> LoadHardwareProfile(const Environment& env, const std::string& name_or_file,
                                                    std::vector<Diag>* duplicate_keys) {
  if (name_or_file.empty()) return Status::BadInput({}, "--hardware is empty: expected a profile name or a YAML file");
  if (IsHardwareFile(name_or_file)) {
    // A user's profile: the same format as the built-in ones (LoadOverridesDocument reads YAML by suffix).
    EP_ASSIGN_OR_RETURN(Document doc, LoadOverridesDocument(env, name_or_file));
    if (duplicate_keys != nullptr) *duplicate_keys = doc.DuplicateKeyWarnings();
    EP_ASSIGN_OR_RETURN(step::HardwareProfile profile, step::ParseHardwareProfile(doc, StemOf(name_or_file)));
    if (profile.memory_only) return MemoryOnlyError(profile);
    return profile;
  }
  // A built-in name reads its own file; only an unknown one reads the whole catalogue, to list it.
  const schemas::DataSource data = env.Data();
  const std::string path = std::string(kHardwareDir) + "/" + name_or_file + ".yaml";
  for (const std::string& listed : data.List(kHardwareDir)) {
    if (listed != path) continue;
    EP_ASSIGN_OR_RETURN(Document doc, data.ReadDocument(path));
    EP_ASSIGN_OR_RETURN(step::HardwareProfile entry, step::ParseHardwareProfile(doc, name_or_file));
    if (entry.memory_only) return MemoryOnlyError(entry);
    return entry;
  }
  EP_ASSIGN_OR_RETURN(const std::vector<step::HardwareProfile> catalogue, LoadHardwareCatalogue(env));
  std::vector<std::string> names, memory_only;
  for (const step::HardwareProfile& entry : catalogue) (entry.memory_only ? memory_only : names).push_back(entry.name);
  std::string message = "--hardware '" + name_or_file + "' is not a known hardware profile";
  // A part named without its variant ("h100" for "h100-sxm", "tpu-v5" for "tpu-v5e") before the
  // nearest spelling ("h200", "tpu-v4").
  std::optional<std::string> suggestion;
  for (const std::string& name : names) {
    if (!suggestion && name_or_file.size() >= 3 && name.starts_with(name_or_file)) suggestion = name;
  }
  if (!suggestion) suggestion = SuggestClosest(name_or_file, names);
  if (suggestion) message += " (did you mean '" + *suggestion + "'?)";
  return Status::BadInput(
      {}, message,
      {"profiles: " + JoinQuoted(names),
       "memory-only accelerators (schemas/hardware/; they budget memory, not a step): " + JoinQuoted(memory_only),
       "or give a profile file (a path with '/' or ending in .yaml; docs/COST.md describes the "
       "format)"});
}

}  // namespace easyplan::api
