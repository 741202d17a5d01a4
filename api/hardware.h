#ifndef EASYPLAN_API_HARDWARE_H_
#define EASYPLAN_API_HARDWARE_H_

// `--hardware NAME|FILE`: an entry of the hardware catalogue (step/hardware.h), the data files under
// schemas/hardware/ ("tpu-v5p"; memory-only accelerators such as "h100-80g" beside the full profiles), or
// a YAML file of the same format (docs/COST.md#hardware-profiles). Model::Hardware and Model::DeviceKinds
// keep what they load; these are the uncached forms.

#include <string>
#include <vector>

#include "api/environment.h"
#include "core/status.h"
#include "step/hardware.h"

namespace easyplan::api {

/// True when `name_or_file` names a file rather than a built-in profile: it holds a '/' or ends in
/// .yaml or .yml.
bool IsHardwareFile(const std::string& name_or_file);

/// Every entry of the built-in catalogue (the files under schemas/hardware/ of `env`), sorted by name.
StatusOr<std::vector<step::HardwareProfile>> LoadHardwareCatalogue(const Environment& env);

/// The names of the catalogue's full profiles (`memory_only` false: what prices a step), sorted.
std::vector<std::string> HardwareNames(const Environment& env);

/// The full profile `name_or_file` names. BadInput for an unknown name (with a did-you-mean and the lists
/// of names), a memory-only accelerator (naming the profiles of its part), an unreadable file, or a profile
/// with a wrong field (naming the file, line and key).
/// `duplicate_keys`, when given, receives a warning per key the file gives twice (the last value is used).
StatusOr<step::HardwareProfile> LoadHardwareProfile(const Environment& env, const std::string& name_or_file,
                                                    std::vector<Diag>* duplicate_keys = nullptr);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_HARDWARE_H_
