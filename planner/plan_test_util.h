#ifndef EASYPLAN_PLANNER_PLAN_TEST_UTIL_H_
#define EASYPLAN_PLANNER_PLAN_TEST_UTIL_H_

// Test support for the planner's tests (header only; no library code includes it): a whole example
// model's plan inputs (examples/<name>/config.json resolved, its template tree in either layout, the
// built-in rules and, for an HF tree, the links to EasyDeL names), and a comparison of two plans.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/document.h"
#include "core/json_parse.h"
#include "planner/layout_links.h"
#include "planner/plan.h"
#include "planner/spec_test_util.h"
#include "rules/rule_library.h"
#include "schemas/resolver.h"
#include "schemas/schema_set.h"
#include "schemas/tree_builder.h"
#include "tests/test_util.h"

namespace easyplan::planner::plan_testing {

/// Everything BuildPlan needs for one example model, owned here.
struct ExampleModel {
  schemas::ResolvedConfig resolved;
  ParamTree tree;
  std::vector<LayoutLink> links;
  std::unique_ptr<rules::RuleLibrary> library;
  const rules::RuleSet* rules = nullptr;
  const rules::Presets* presets = nullptr;
  const rules::LogicalDims* logical_dims = nullptr;

  PlanRequest Request(Mesh mesh, UnevenMode uneven = UnevenMode::kReplicate) const {
    PlanRequest request;
    request.tree = &tree;
    request.rules = rules;
    request.presets = presets;
    request.config = &resolved.config;
    request.logical_dims = logical_dims;
    request.links = links;
    request.mesh = std::move(mesh);
    request.uneven = uneven;
    return request;
  }
};

/// examples/<name>/config.json planned as `easyplan plan` plans it with --layout `layout`.
inline std::unique_ptr<ExampleModel> LoadExampleModel(const std::string& name, Layout layout) {
  auto model = std::make_unique<ExampleModel>();
  schemas::SchemaSet schemas(schemas::DataSource::Embedded());
  const std::string path = easyplan::testing::SourceDir() + "/examples/" + name + "/config.json";
  auto doc = ParseJsonDocument(easyplan::testing::ReadTestFile(path), path);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  auto resolved = schemas::ResolveConfig(schemas::ConfigInput{std::move(*doc), std::nullopt, {}}, {}, schemas);
  EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
  model->resolved = std::move(*resolved);
  auto tree_template = schemas.Tree(model->resolved.family);
  EXPECT_TRUE(tree_template.ok()) << tree_template.status().ToString();
  schemas::TreeOptions options;
  options.layout = layout;
  auto tree = schemas::BuildParamTree(**tree_template, model->resolved.config, options);
  EXPECT_TRUE(tree.ok()) << tree.status().ToString();
  model->tree = std::move(*tree);
  model->library = std::make_unique<rules::RuleLibrary>(schemas::DataSource::Embedded());
  model->presets = *model->library->GetPresets();
  model->logical_dims = *model->library->GetLogicalDims();
  auto rules = model->library->ForModelType(model->resolved.config["model_type"].get<std::string>());
  EXPECT_TRUE(rules.ok()) << rules.status().ToString();
  model->rules = *rules;
  if (model->rules->layout != layout) {
    schemas::TreeOptions expand;
    expand.include_buffers = true;
    auto expanded = schemas::ExpandTreeTemplate(**tree_template, model->resolved.config, expand);
    EXPECT_TRUE(expanded.ok()) << expanded.status().ToString();
    auto links = LinkHfToEasyDel(model->tree, *expanded);
    EXPECT_TRUE(links.ok()) << links.status().ToString();
    model->links = std::move(*links);
  }
  return model;
}

/// Everything a plan reports, for comparing two plans of the same inputs.
inline void ExpectSamePlan(const Plan& a, const Plan& b) {
  EXPECT_EQ(a.mesh.axis_names, b.mesh.axis_names);
  EXPECT_EQ(a.mesh.shape, b.mesh.shape);
  EXPECT_EQ(a.uneven, b.uneven);
  ASSERT_EQ(a.params.size(), b.params.size());
  for (size_t i = 0; i < a.params.size(); ++i) {
    SCOPED_TRACE("param " + std::to_string(i));
    EXPECT_EQ(a.params[i].tensor, b.params[i].tensor);
    EXPECT_EQ(a.params[i].origin, b.params[i].origin);
    EXPECT_EQ(a.params[i].rule, b.params[i].rule);
    EXPECT_EQ(a.params[i].rule_case, b.params[i].rule_case);
    EXPECT_EQ(a.params[i].spec, b.params[i].spec);
    EXPECT_EQ(a.params[i].effective, b.params[i].effective);
    EXPECT_EQ(a.params[i].issues.size(), b.params[i].issues.size());
    EXPECT_EQ(a.params[i].group, b.params[i].group);
  }
  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (size_t g = 0; g < a.groups.size(); ++g) {
    SCOPED_TRACE("group " + std::to_string(g));
    EXPECT_EQ(a.groups[g].tensors, b.groups[g].tensors);
    EXPECT_EQ(a.groups[g].bits, b.groups[g].bits);
    EXPECT_EQ(a.groups[g].expert, b.groups[g].expert);
    EXPECT_EQ(a.groups[g].layout.shape(), b.groups[g].layout.shape());
    EXPECT_EQ(a.groups[g].layout.tiles(), b.groups[g].layout.tiles());
    EXPECT_EQ(a.groups[g].replica_axes, b.groups[g].replica_axes);
  }
  EXPECT_EQ(a.device_bytes, b.device_bytes);
  EXPECT_EQ(a.rule_hits, b.rule_hits);
  EXPECT_EQ(a.rule_matches, b.rule_matches);
  ASSERT_EQ(a.findings.size(), b.findings.size());
  for (size_t f = 0; f < a.findings.size(); ++f) {
    SCOPED_TRACE("finding " + std::to_string(f));
    EXPECT_EQ(a.findings[f].code, b.findings[f].code);
    EXPECT_EQ(a.findings[f].severity, b.findings[f].severity);
    EXPECT_EQ(a.findings[f].message, b.findings[f].message);
    EXPECT_EQ(a.findings[f].tensor, b.findings[f].tensor);
    EXPECT_EQ(a.findings[f].count, b.findings[f].count);
    EXPECT_EQ(a.findings[f].rule, b.findings[f].rule);
    EXPECT_EQ(a.findings[f].loc.line, b.findings[f].loc.line);
    EXPECT_EQ(a.findings[f].notes, b.findings[f].notes);
  }
}

}  // namespace easyplan::planner::plan_testing

#endif  // EASYPLAN_PLANNER_PLAN_TEST_UTIL_H_
