#ifndef EASYPLAN_API_HARDWARE_H_
#define EASYPLAN_API_HARDWARE_H_

// `--hardware NAME|FILE`: an accelerator profile (step/hardware.h) by the name of one of the data
// files under schemas/hardware/ ("tpu-v5p"), or read from a YAML file of the same format
// (docs/COST.md#hardware-profiles). Model::Hardware keeps what it loads; this is the uncached form.

#include <string>
#include <vector>

#include "api/environment.h"
#include "core/status.h"
#include "step/hardware.h"

namespace easyplan::api {

/// True when `name_or_file` names a file rather than a built-in profile: it holds a '/' or ends in
/// .yaml or .yml.
bool IsHardwareFile(const std::string& name_or_file);

/// The names of the built-in profiles (the file stems under schemas/hardware/ of `env`), sorted.
std::vector<std::string> HardwareNames(const Environment& env);

/// The profile `name_or_file` names. BadInput for an unknown name (with a did-you-mean and the list of
/// names), an unreadable file, or a profile with a wrong field (naming the file, line and key).
/// `duplicate_keys`, when given, receives a warning per key the file gives twice (the last value is used).
StatusOr<step::HardwareProfile> LoadHardwareProfile(const Environment& env, const std::string& name_or_file,
                                                    std::vector<Diag>* duplicate_keys = nullptr);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_HARDWARE_H_
