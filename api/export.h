#ifndef EASYPLAN_API_EXPORT_H_
#define EASYPLAN_API_EXPORT_H_

// `easyplan export`: a model's plan as another runtime reads it (docs/FORMATS.md). The artifact is
// built in planner/export.h; this is the pipeline that plans the model for it.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/checked.h"
#include "api/model.h"
#include "api/options.h"
#include "planner/findings.h"

namespace easyplan::api {

struct ExportOptions {
  PlanOptions plan;
  std::string to;               ///< a name of planner::ExportFormatNames()
  std::string format = "text";  ///< text | json (xla-hlo and shardy: JSON instead of lines)
  /// False: plan.layout is the default, and the formats about torch tensors (torch, hf-tp-plan) plan
  /// the HF names unless a tree is given.
  bool layout_given = false;
  /// The step the runtime formats write (megatron, maxtext; torch and json take microbatches): as given.
  std::optional<int64_t> batch;
  std::optional<int64_t> seq;
  std::optional<int64_t> microbatches;
};

struct ExportResult {
  std::string text;  ///< the artifact; empty when the plan has errors
  std::vector<planner::Finding> findings;
  bool failed = false;  ///< the plan has errors: there is no artifact
};

/// Plans `model` as `options` say and builds the artifact. Bad input (an unknown format, a format
/// option that does not apply, EasyDeL names for hf-tp-plan) is a Status; a plan with errors is a
/// result with `failed` and its findings.
StatusOr<ExportResult> Export(const std::shared_ptr<const Model>& model, const Checked<ExportOptions>& options);
/// The same for options not checked yet: checked once (CheckExportOptions), then exported.
StatusOr<ExportResult> Export(const std::shared_ptr<const Model>& model, const ExportOptions& options);

/// The option checks that need no config: the plan's (CheckPlanOptions), the format and its options.
Status CheckExportOptions(const ExportOptions& options);
/// What Checked<ExportOptions> runs (api/checked.h).
inline Status OptionChecks(const ExportOptions& options) { return CheckExportOptions(options); }

}  // namespace easyplan::api

#endif  // EASYPLAN_API_EXPORT_H_
