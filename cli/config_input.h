#ifndef EASYPLAN_CLI_CONFIG_INPUT_H_
#define EASYPLAN_CLI_CONFIG_INPUT_H_

#include <string>

#include "cli/context.h"
#include "core/document.h"

namespace easyplan::cli {

/// Both loaders apply ctx.limits (core/limits.h): input size, nesting depth, value count.

/// All of standard input, within --max-input-bytes; a closed or unreadable stdin is bad input.
StatusOr<std::string> ReadStdin(Context& ctx);

/// Loads CONFIG as the user named it: a config.json path, a directory holding config.json, or "-"
/// for standard input. JSON only (config.json is JSON).
StatusOr<Document> LoadConfigDocument(Context& ctx, const std::string& spec);

/// Loads an overrides file: YAML (.yaml/.yml) or JSON (anything else; JSON is tried first).
StatusOr<Document> LoadOverridesDocument(Context& ctx, const std::string& path);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_CONFIG_INPUT_H_
