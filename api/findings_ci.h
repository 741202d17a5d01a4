#ifndef EASYPLAN_API_FINDINGS_CI_H_
#define EASYPLAN_API_FINDINGS_CI_H_

// Findings in the forms CI systems read (`validate --format junit|github`; docs/OPTIONS.md): a JUnit
// report and GitHub Actions workflow commands. The terminal's text is api/findings_text.h.

#include <string>
#include <vector>

#include "planner/findings.h"

namespace easyplan::api {

/// A JUnit report: one test case per finding code; errors (and warnings under `strict`) fail.
std::string FindingsToJunit(const std::vector<planner::Finding>& findings, bool strict);

/// GitHub Actions workflow commands: `::error file=F,line=L,title=code::message`. Findings of the
/// `builtin_rules` file point at `config_file` line 1 (the repository has no easyplan rule file).
std::string FindingsToGithub(const std::vector<planner::Finding>& findings, const std::string& builtin_rules = "",
                             const std::string& config_file = "");

}  // namespace easyplan::api

#endif  // EASYPLAN_API_FINDINGS_CI_H_
