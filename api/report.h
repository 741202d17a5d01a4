#ifndef EASYPLAN_API_REPORT_H_
#define EASYPLAN_API_REPORT_H_

// `report`: one self-contained HTML page of a plan (docs/REPORT.md). The page's template
// (api/report/report.html: markup, style and script, no network) is embedded at build time; the plan,
// with a step its memory, with a hardware profile the step's cost per layer, and from `suggest` the
// ranked candidates, are written into it as one JSON document the script draws. Tensors travel
// compressed: a name's digit runs become '#', and tensors of one name template, layout group and rule
// share a row of their numbers, so DeepSeek-V3's 91,991 HF tensors fit in well under 2 MB.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "api/checked.h"
#include "api/model.h"
#include "api/options.h"
#include "api/suggest.h"
#include "core/json.h"
#include "core/limits.h"
#include "core/status.h"

namespace easyplan::api {

struct ReportOptions {
  PlanOptions plan;
  /// With a step (--mode, --batch, --seq, and --hardware or a budget): the memory per device. `batch`
  /// is the global batch of one optimizer step; memory is that of one microbatch.
  std::optional<MemoryOptions> memory;
  /// With a step and --hardware: how `cost` prices it.
  PricingOptions pricing;
  /// Training: replaces the config's gradient_checkpointing (a `suggest` candidate's policy).
  std::optional<planner::CheckpointPolicy> policy;
  /// A step flag given without --mode ("--batch"), which CheckReportOptions refuses (SetReportStep).
  std::string step_flag_without_mode;
};

/// Sets options.memory from the step flags: the step when --mode is given; without --mode there is no
/// step (the page draws parameters only), and a step flag that was given anyway (--batch, --seq,
/// --hardware, ...) is kept in step_flag_without_mode so the options are refused instead of dropped.
void SetReportStep(const MemoryOptions& memory, ReportOptions& options);

/// The checks that need no config: the plan's (CheckPlanOptions), the step's and the pricing group's.
Status CheckReportOptions(const ReportOptions& options);
/// What Checked<ReportOptions> runs (api/checked.h).
inline Status OptionChecks(const ReportOptions& options) { return CheckReportOptions(options); }

struct ReportResult {
  /// The page's data: {"model_type", "mesh", "rules", "uneven", "verdict", "groups", "tensors",
  /// "devices", "memory", "cost", "suggest", "findings"} (docs/REPORT.md#the-data).
  Json data;
  int64_t errors = 0;        ///< error findings of the plan
  std::optional<bool> fits;  ///< with a step: whether it fits the budget
  /// What the CLI's exit code says: the plan has errors, or the step does not fit.
  bool Failed() const { return errors > 0 || (fits && !*fits); }
};

/// The report of `model` planned under `options`.
StatusOr<ReportResult> Report(const std::shared_ptr<const Model>& model, const Checked<ReportOptions>& options);
/// The same for options not checked yet: checked once (CheckReportOptions), then drawn.
StatusOr<ReportResult> Report(const std::shared_ptr<const Model>& model, const ReportOptions& options);

/// The report of `suggest`'s winner (as `report` with the winner's reproduce options draws it), with
/// every ranked candidate and the Pareto front under "suggest". `result.ranked` must not be empty.
StatusOr<ReportResult> SuggestReport(const std::shared_ptr<const Model>& model, const SuggestOptions& options,
                                     const SuggestResult& result);

/// The `report` options that reproduce `candidate` of a search run with `options`.
ReportOptions CandidateReportOptions(const SuggestOptions& options, const Candidate& candidate);

/// The HTML page of `data`.
std::string ReportPage(const Json& data);
/// The same, refused past limits.max_output_bytes (bad input naming --max-output-bytes).
StatusOr<std::string> ReportPage(const Json& data, const Limits& limits);

/// The embedded template (api/report/report.html).
std::string_view ReportTemplate();

}  // namespace easyplan::api

#endif  // EASYPLAN_API_REPORT_H_
