#ifndef EASYPLAN_API_VALIDATE_H_
#define EASYPLAN_API_VALIDATE_H_

// `validate`: a plan's findings for CI, with the memory budget (parameters alone, or with --mode
// train|prefill|decode --batch --seq the whole memory of `easyplan memory`) and the activation findings of a
// runtime mode.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/checked.h"
#include "api/model.h"
#include "api/options.h"
#include "api/plan_json.h"
#include "core/mesh.h"
#include "planner/findings.h"
#include "planner/memory.h"

namespace easyplan::api {

struct ValidateOptions {
  PlanOptions plan;
  /// The step, each option once: mode, batch and seq add the activation findings of that runtime mode;
  /// max_memory ("" = no budget) or hardware (its HBM, api/hardware.h) is the budget; with mode
  /// train, prefill or decode, batch and seq, the budget holds the whole memory of `easyplan memory`, which the step
  /// state (optimizer, max_length, ...) sizes.
  MemoryOptions step;

  /// The activation options of `step`'s runtime mode.
  ActivationOptions Activations() const;
};

/// The option checks that need no config: the plan's (CheckPlanOptions), the step's and the budget's.
Status CheckValidateOptions(const ValidateOptions& options);
/// What Checked<ValidateOptions> runs (api/checked.h).
inline Status OptionChecks(const ValidateOptions& options) { return CheckValidateOptions(options); }

struct ValidateResult {
  std::vector<planner::Finding> findings;  ///< errors first
  int errors = 0;
  int warnings = 0;
  bool strict = false;
  bool failed = false;  ///< errors, or warnings under --strict
  int64_t tensors = 0;
  std::string easydel_version;  ///< the EasyDeL version validated against
  Mesh mesh;
  DeviceSummary summary;                              ///< parameter bytes per device
  std::optional<int64_t> budget;                      ///< --max-memory (or --hardware's HBM) in bytes
  std::string budget_text;                            ///< --max-memory as given, or "tpu-v5p (95.0 GiB HBM)"
  std::optional<planner::DeviceMemory> worst_memory;  ///< with a whole-memory budget: the worst device
  std::string memory_mode;                            ///< "train", "prefill" or "decode" with a whole-memory budget
  /// Where a finding can point in the user's repository: the built-in rule file's name as findings
  /// carry it ("rules/llama.yaml"; "" with --rules FILE) and the config file (CONFIG, or its
  /// config.json when a directory; "" for stdin or none). A built-in rule's file is easyplan's, not the
  /// user's, so CI annotations of its findings point at the config instead.
  std::string builtin_rules;
  std::string config_file;
};

StatusOr<ValidateResult> Validate(const std::shared_ptr<const Model>& model, const Checked<ValidateOptions>& options);
/// The same for options not checked yet: checked once (CheckValidateOptions), then validated.
StatusOr<ValidateResult> Validate(const std::shared_ptr<const Model>& model, const ValidateOptions& options);

/// `validate --format json`: {"ok", "errors", "warnings", "tensors", "devices", "max_bytes_per_device",
/// "worst_device", "findings"}.
std::string ValidateToJsonText(const ValidateResult& result);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_VALIDATE_H_
