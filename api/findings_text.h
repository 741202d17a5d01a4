#ifndef EASYPLAN_API_FINDINGS_TEXT_H_
#define EASYPLAN_API_FINDINGS_TEXT_H_

// Findings as the text every caller shows: `file:line: error: message [code]`, notes indented, then a
// count line. The CLI prints it; api errors that carry findings (check's tiny plan) quote it.

#include <cstdint>
#include <string>
#include <vector>

#include "planner/findings.h"

namespace easyplan::api {

/// " (and 3 more tensors)" for a finding that counts `count` tensors; "" for one.
std::string MoreTensors(int64_t count);

/// One finding's first line.
std::string FindingLine(const planner::Finding& finding);

/// Every finding with its notes, and "N errors, N warnings, N notes".
std::string FindingsToText(const std::vector<planner::Finding>& findings);

/// True for a note the user cannot act on: a dead or shadowed rule of a built-in table (the planner makes
/// those notes; the same rule in the user's own file stays a warning).
bool IsBuiltinRuleNote(const planner::Finding& finding);

/// The findings a terminal shows: with `verbose`, FindingsToText of all of them; without it, the built-in
/// rule notes are left out (the count line says how many, and that --verbose shows them), and when
/// nothing else is left the text is empty.
std::string FindingsForTerminal(const std::vector<planner::Finding>& findings, bool verbose);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_FINDINGS_TEXT_H_
