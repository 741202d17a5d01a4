#ifndef EASYPLAN_API_COMMAND_RUNNER_H_
#define EASYPLAN_API_COMMAND_RUNNER_H_

// Runs one command on a Model by name and returns its machine-readable artifact: the exact text the
// CLI prints with --format json (or the text artifact of `explain` and `export`). The Python module
// calls this and parses the JSON, so its results equal the CLI's by construction.

#include <memory>
#include <string>

#include "api/command_options.h"
#include "api/model.h"
#include "api/plan_pipeline.h"
#include "core/json.h"

namespace easyplan::api {

struct CommandOutput {
  std::string text;              ///< the artifact: JSON text, or text for explain/export
  bool json = true;              ///< `text` is JSON
  bool findings_failed = false;  ///< the CLI would exit 1 (errors, warnings under --strict, does not fit)
  /// plan: {"rules": [[regex, spec], ...] (the ordered rules, specs resolved), "bytes_per_device": [...]}.
  Json extra;
};

/// `plan` without rendering it: the result, kept for a caller that renders it on demand
/// (PlanResultToJsonText), and its small parts as JSON in `extra`: {"rules": [[regex, spec], ...],
/// "bytes_per_device": [...], "findings": [...], "failed": bool}. A search over many meshes reads only
/// these.
StatusOr<std::shared_ptr<const PlanResult>> PlanCommand(const std::shared_ptr<const Model>& model,
                                                        const CommandOptions& options, Json* extra);

/// The model a call on `model` with config options `options` runs on (the Python module's Model
/// methods, which take every option of their command): `model` itself when the options are its own;
/// with more `set` values than its own, `model` resolved again with them after its own (Model::WithSets,
/// as the CLI applies --set after the file). Any other config option that differs from the model's
/// (defaults, overrides, devices, strict, schemas_dir) is bad input naming it, with how to give it:
/// those shape the resolved config and its tree, which a Model computes once. An option is never dropped.
StatusOr<std::shared_ptr<const Model>> ModelWithOptions(const std::shared_ptr<const Model>& model,
                                                        const ConfigOptions& options);

/// `command` (see CommandNames()) on `model` with `options`. Bad input is a Status; findings are not.
StatusOr<CommandOutput> RunCommand(const std::shared_ptr<const Model>& model, const std::string& command,
                                   const CommandOptions& options);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_COMMAND_RUNNER_H_
