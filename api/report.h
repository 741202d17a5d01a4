#ifndef EASYPLAN_API_REPORT_H_
#define EASYPLAN_API_REPORT_H_

// `report`: one self-contained HTML page of a plan (docs/REPORT.md). The page's template
// (api/report/report.html: markup, style and script, no network) is embedded at build time; the plan,
// and with a step its memory, are written into it as one JSON document the script draws. Tensors
// travel compressed: a name's digit runs become '#', and tensors of one name template, layout group and
// rule share a row of their numbers, so DeepSeek-V3's 91,991 HF tensors fit in well under 2 MB.

#include <memory>
#include <optional>
#include <string>

#include "api/model.h"
#include "api/options.h"
#include "core/json.h"
#include "core/status.h"

namespace easyplan::api {

struct ReportOptions {
  PlanOptions plan;
  /// With a step (--mode, --batch, --seq, and --hardware or a budget): the memory per device.
  std::optional<MemoryOptions> memory;
};

/// The page's data: {"model_type", "mesh", "rules", "uneven", "verdict", "groups", "tensors",
/// "devices", "memory", "findings"} (docs/REPORT.md#the-data).
StatusOr<Json> ReportData(const std::shared_ptr<const Model>& model, const ReportOptions& options);

/// The HTML page of `data`.
std::string ReportPage(const Json& data);

/// The embedded template (api/report/report.html).
std::string_view ReportTemplate();

}  // namespace easyplan::api

#endif  // EASYPLAN_API_REPORT_H_
