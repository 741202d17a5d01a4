#ifndef EASYPLAN_CLI_PLAN_FORMAT_H_
#define EASYPLAN_CLI_PLAN_FORMAT_H_

// Rendering plans and findings: the plan as a table for people or JSON for machines
// (schemas/json/plan.schema.json), findings as text, JSON, JUnit XML or GitHub annotations.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/param_tree.h"
#include "planner/activations.h"
#include "planner/expert_mesh.h"
#include "planner/plan.h"
#include "rules/rule_set.h"

namespace easyplan::cli {

/// What a rendering needs besides the plan itself.
struct PlanView {
  const planner::Plan* plan = nullptr;
  const ParamTree* tree = nullptr;
  const rules::RuleSet* rules = nullptr;
  std::optional<int64_t> device;  ///< --device K: add each tensor's slice and replica id on K
  bool summary_only = false;      ///< --summary: the per-device summary without the tensor rows
  /// MoE configs: the folded expert mesh and expert specs (both set, or neither).
  const planner::ExpertMesh* expert_mesh = nullptr;
  const planner::ExpertSpecs* expert_specs = nullptr;
};

/// Per-device bytes: min, median (lower), max, and the first device holding the max.
struct DeviceSummary {
  int64_t min = 0;
  int64_t median = 0;
  int64_t max = 0;
  int64_t worst_device = 0;
  int64_t total = 0;  ///< bytes over all devices (sum of device_bytes)
};
DeviceSummary SummarizeDevices(const std::vector<int64_t>& device_bytes);

std::string PlanToJsonText(const PlanView& view);
std::string PlanToTable(const PlanView& view);

/// `file:line: error: message [code]` per finding, notes indented, and a count line.
std::string FindingsToText(const std::vector<planner::Finding>& findings);
std::string FindingsToJsonText(const std::vector<planner::Finding>& findings, const std::string& summary_key_json);
/// A JUnit report: one test case per finding code; errors (and warnings under `strict`) fail.
std::string FindingsToJunit(const std::vector<planner::Finding>& findings, bool strict);
/// GitHub Actions workflow commands: `::error file=F,line=L,title=code::message`.
std::string FindingsToGithub(const std::vector<planner::Finding>& findings);

/// The JSON value of a finding list (shared by `plan --format json` and `validate --format json`).
std::string FindingJson(const planner::Finding& finding);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_PLAN_FORMAT_H_
