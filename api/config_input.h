#ifndef EASYPLAN_API_CONFIG_INPUT_H_
#define EASYPLAN_API_CONFIG_INPUT_H_

#include <string>

#include "api/environment.h"
#include "core/document.h"

namespace easyplan::api {

/// Both loaders apply env.limits (core/limits.h): input size, nesting depth, value count.

/// All of standard input, within --max-input-bytes; a closed or unreadable stdin is bad input.
StatusOr<std::string> ReadStdin(const Environment& env);

/// Loads CONFIG as the user named it: a config.json path, a directory holding config.json, or "-"
/// for standard input. JSON only (config.json is JSON).
StatusOr<Document> LoadConfigDocument(const Environment& env, const std::string& spec);

/// Loads an overrides file: YAML (.yaml/.yml) or JSON (anything else; JSON is tried first).
StatusOr<Document> LoadOverridesDocument(const Environment& env, const std::string& path);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_CONFIG_INPUT_H_
