#ifndef EASYPLAN_PLANNER_ACTIVATIONS_TEST_UTIL_H_
#define EASYPLAN_PLANNER_ACTIVATIONS_TEST_UTIL_H_

// The fixtures of the activation tests (runtime_modes_test.cc, kv_cache_test.cc, expert_specs_test.cc,
// attention_kernels_test.cc, ragged_cache_test.cc, activations_test.cc; header only, no library code
// includes it): the real rules/_activations.yaml and presets, a small Llama config resolved by the real
// resolver with customised PartitionAxis settings given as `--set` strings (so the decode_*
// derivations are EasyDeL's), and activation plans built from them.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/document.h"
#include "core/json_parse.h"
#include "planner/activations.h"
#include "planner/layout.h"
#include "planner/spec_test_util.h"
#include "rules/rule_library.h"
#include "schemas/data_source.h"
#include "schemas/resolver.h"

namespace easyplan::planner::activations_testing {

using Entry = PartitionSpec::Entry;
inline const Entry B = {"fsdp", "dp"};
inline const Entry N = {};
inline const Entry DP = {"dp"};
inline const Entry SP = {"sp"};
inline const Entry TP = {"tp"};
inline const Entry FSDP = {"fsdp"};

inline constexpr Mode kAllModes[] = {Mode::kTrain, Mode::kPrefill, Mode::kDecode, Mode::kInsert};

// Two customised PartitionAxis settings (C1, C2), as `--set` strings.
inline const std::vector<std::string> kC1 = {"partition_axis.decode_batch_axis=dp",
                                             "partition_axis.decode_head_axis=null"};
inline const std::vector<std::string> kC2 = {
    "partition_axis.kv_head_axis=null", "partition_axis.bias_head_sequence_axis=tp",
    "partition_axis.decode_batch_axis=dp", "partition_axis.decode_key_sequence_axis=fsdp"};

class ActivationsTest : public ::testing::Test {
 protected:
  ActivationsTest() : library_(schemas::DataSource::Embedded()), schemas_(schemas::DataSource::Embedded()) {
    auto text = schemas::DataSource::Embedded().Read("rules/_activations.yaml");
    EXPECT_TRUE(text.ok());
    auto table = ActivationTable::Parse(*text, "rules/_activations.yaml");
    EXPECT_TRUE(table.ok()) << table.status().ToString();
    table_ = std::move(*table);
    presets_ = *library_.GetPresets();
  }

  // A small Llama config (GQA: 32 heads, 8 kv heads) resolved with `sets`.
  Json Config(const std::vector<std::string>& sets = {}, const std::string& extra = "") {
    const std::string text = R"({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
        "num_key_value_heads": 8, "num_hidden_layers": 4, "vocab_size": 32000, "intermediate_size": 11008)" +
                             extra + "}";
    auto doc = ParseJsonDocument(text, "config.json");
    EXPECT_TRUE(doc.ok());
    schemas::ConfigInput input{std::move(*doc), std::nullopt, sets};
    auto resolved = schemas::ResolveConfig(input, schemas::ResolveOptions{}, schemas_);
    EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
    return resolved->config;
  }

  AttnShardingRules Rules(const Json& config, Mode mode, AttnLayout layout = AttnLayout::kBthd, bool mni = false,
                          std::optional<int> aux = std::nullopt) {
    auto rules = GetShardings(table_, *presets_, config, AttnOptions{mode, layout, mni, aux});
    EXPECT_TRUE(rules.ok()) << rules.status().ToString();
    return *rules;
  }

  PartitionSpec Resolve(const ActivationTable::Axes& axes, const Json& config, Mode mode) {
    auto spec = ResolveAxes(axes, *presets_, config, mode);
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    return *spec;
  }

  // The residual preset `name` resolved for a tensor of `shape` (its integer mode) and corrected on `mesh`.
  PartitionSpec Residual(const std::string& name, const Json& config, const Shape& shape, const Mesh& mesh) {
    const ActivationTable::ResidualEntry* entry = table_.FindResidual(name);
    EXPECT_NE(entry, nullptr);
    const Mode mode = entry->dynamic_dim && shape[*entry->dynamic_dim] == 1 ? Mode::kDecode : Mode::kTrain;
    return CorrectSpec(shape, Resolve(entry->axes, config, mode), mesh, UnevenMode::kReplicate).spec;
  }

  static schemas::ModelDims DimsOf(const Json& config) {
    auto dims = schemas::ModelDimsOf(config);
    EXPECT_TRUE(dims.ok()) << dims.status().ToString();
    return dims.ok() ? *dims : schemas::ModelDims();
  }

  StatusOr<ActivationPlan> Build(const Json& config, const Mesh& mesh, Mode mode, std::optional<int64_t> batch,
                                 std::optional<int64_t> seq) {
    ActivationRequest request;
    request.table = &table_;
    request.presets = presets_;
    request.config = &config;
    const schemas::ModelDims dims = DimsOf(config);
    request.dims = &dims;
    request.mesh = mesh;
    request.attention.mode = mode;
    request.batch = batch;
    request.seq = seq;
    return BuildActivationPlan(request);
  }

  static const Finding* FindCode(const ActivationPlan& plan, FindingCode code) {
    for (const Finding& finding : plan.findings) {
      if (finding.code == code) return &finding;
    }
    return nullptr;
  }

  rules::RuleLibrary library_;
  schemas::SchemaSet schemas_;
  ActivationTable table_;
  const rules::Presets* presets_ = nullptr;
};

// Which mode and which specs each kernel uses (easydel/operations/kernels/): plans with --kernel.
class KernelTest : public ActivationsTest {
 protected:
  StatusOr<ActivationPlan> BuildKernel(const Json& config, const Mesh& mesh, Mode mode, std::optional<int64_t> batch,
                                       std::optional<int64_t> seq, const std::string& kernel,
                                       std::optional<int> aux = std::nullopt) {
    ActivationRequest request;
    request.table = &table_;
    request.presets = presets_;
    request.config = &config;
    const schemas::ModelDims dims = DimsOf(config);
    request.dims = &dims;
    request.mesh = mesh;
    request.attention.mode = mode;
    request.attention.softmax_aux_ndim = aux;
    request.batch = batch;
    request.seq = seq;
    request.kernel = kernel;
    return BuildActivationPlan(request);
  }

  // The kernel report of `kernel` on the C1 example: dp2,fsdp2,ep1,tp2,sp2, decode query
  // (8, 1, 32, 128) and cache KV (8, 4096, 8, 128).
  KernelReport Example(const std::string& kernel) {
    auto plan = BuildKernel(Config(kC1), plan_testing::FiveAxisMesh(2, 2, 1, 2, 2), Mode::kDecode, 8, 4096, kernel);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_TRUE(plan.ok() && plan->kernel.has_value());
    return plan.ok() && plan->kernel ? *plan->kernel : KernelReport();
  }

  static const KernelSpecReport* Spec(const KernelReport& report, const std::string& name) {
    for (const KernelSpecReport& spec : report.specs) {
      if (spec.name == name) return &spec;
    }
    return nullptr;
  }
  static PartitionSpec Applied(const KernelReport& report, const std::string& name) {
    const KernelSpecReport* spec = Spec(report, name);
    EXPECT_NE(spec, nullptr) << name;
    return spec ? spec->applied : PartitionSpec();
  }
};

}  // namespace easyplan::planner::activations_testing

#endif  // EASYPLAN_PLANNER_ACTIVATIONS_TEST_UTIL_H_
