#ifndef EASYPLAN_API_FINDINGS_JSON_H_
#define EASYPLAN_API_FINDINGS_JSON_H_

// The findings as JSON (schemas/json/plan.schema.json's "findings"), one writer for every document that
// lists them: `plan`, `validate` and `activations --format json` end with the findings member in a fixed
// key order and layout (goldens stay readable and byte-stable); cost, memory and report embed the same
// values in documents built as Json.

#include <cstdint>
#include <string>
#include <vector>

#include "core/json.h"
#include "planner/findings.h"

namespace easyplan::api {

/// The JSON value of a finding, on one line.
std::string FindingJson(const planner::Finding& finding);

/// The findings as a JSON array of FindingJson values, for documents built as Json (cost, report).
Json FindingsJsonArray(const std::vector<planner::Finding>& findings);

/// How many findings are errors and how many warnings (what a summary reports and `--strict` fails on).
struct SeverityCounts {
  int64_t errors = 0;
  int64_t warnings = 0;
};
SeverityCounts CountSeverities(const std::vector<planner::Finding>& findings);

/// The member that closes a document written as text: `  "findings": [...]` at indent 2, one finding a
/// line at indent 4, then the document's closing brace and a newline.
std::string ClosingFindingsJson(const std::vector<planner::Finding>& findings);

/// {summary members..., "findings": [...]}: `summary_key_json` holds members at indent 2, each line
/// ending ",\n".
std::string FindingsToJsonText(const std::vector<planner::Finding>& findings, const std::string& summary_key_json);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_FINDINGS_JSON_H_
