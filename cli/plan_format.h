#ifndef EASYPLAN_CLI_PLAN_FORMAT_H_
#define EASYPLAN_CLI_PLAN_FORMAT_H_

// Rendering plans and findings for people and CI: the plan as a table, findings as text, JUnit XML or
// GitHub annotations. The JSON forms live in api/plan_json.h, shared with the Python module.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/findings_text.h"
#include "api/plan_json.h"
#include "core/param_tree.h"

namespace easyplan::cli {

using api::DeviceSummary;
using api::FindingsToText;
using api::PlanView;
using api::SummarizeDevices;

std::string PlanToTable(const PlanView& view);

/// A JUnit report: one test case per finding code; errors (and warnings under `strict`) fail.
std::string FindingsToJunit(const std::vector<planner::Finding>& findings, bool strict);
/// GitHub Actions workflow commands: `::error file=F,line=L,title=code::message`. Findings of the
/// `builtin_rules` file point at `config_file` line 1 (the repository has no easyplan rule file).
std::string FindingsToGithub(const std::vector<planner::Finding>& findings, const std::string& builtin_rules = "",
                             const std::string& config_file = "");

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_PLAN_FORMAT_H_
