// Plans every real config in ../shared/corpus with its built-in rules on several 8-device meshes,
// through the library path the CLI uses (api/plan_inputs.h), and checks invariants that must hold
// for any correct plan:
//   - built-in rules on a corpus model give no error finding but logical-indivisible (gemma-2b's single
//     kv head on tp=2 is a real one), and that only for a dim that stays sharded after the correction;
//   - the per-device byte totals add up to the sum over tensors of (shard bytes x devices holding it),
//     with the shard shape recomputed here from the effective spec and the mesh;
//   - every tensor is covered exactly by its distinct blocks (their elements sum to the tensor's);
//   - on a pure fsdp mesh every ColumnWise kernel is split fsdp ways on dim 0 when divisible;
//   - the HF layout holds the same bytes per device as the EasyDeL layout for non-FP8 models, once the
//     tensors that exist in only one layout (an untied lm_head, checkpoint-only tensors) are set aside.
// Skipped (with a message) when the corpus is absent; every config.json in it is planned, none skipped.
//
// PlanJsonSchemaTest (no corpus needed) checks every `plan --format json` golden output against
// schemas/json/plan.schema.json with the small draft 2020-12 subset validator of tests/test_util_json_schema.h:
// the project has no JSON Schema library.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "api/plan_inputs.h"
#include "core/document.h"
#include "core/file_system.h"
#include "core/json_parse.h"
#include "planner/plan.h"
#include "schemas/tree_builder.h"
#include "tests/test_util.h"
#include "tests/test_util_json_schema.h"

namespace easyplan {
namespace {

namespace fs = std::filesystem;

struct MeshCase {
  std::string name;
  std::string mesh;
  bool moe_only = false;
};

const std::vector<MeshCase>& Meshes() {
  static const std::vector<MeshCase> meshes = {
      {"fsdp8", "dp=1,fsdp=8,ep=1,tp=1,sp=1"},
      {"fsdp4_tp2", "dp=1,fsdp=4,ep=1,tp=2,sp=1"},
      {"dp2_fsdp2_tp2", "dp=2,fsdp=2,ep=1,tp=2,sp=1"},
      // Dense models have no ep-sharded tensor: the ep axis replicates them, which the invariants cover too.
      {"fsdp2_ep2_tp2", "dp=1,fsdp=2,ep=2,tp=2,sp=1", /*moe_only=*/false},
  };
  return meshes;
}

bool IsMoe(const Json& config) {
  for (const char* key : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    auto it = config.find(key);
    if (it != config.end() && it->is_number_integer() && it->get<int64_t>() > 0) return true;
  }
  return false;
}

bool IsFp8(const Json& config) {
  auto it = config.find("quantization_config");
  return it != config.end() && it->is_object() && it->value("quant_method", "") == "fp8";
}

/// A plan and what it was built from.
struct Planned {
  std::unique_ptr<api::PlanInputs> inputs;
  planner::Plan plan;
  std::string diagnostics;  // what LoadPlanInputs printed (resolve warnings)
};

/// Plans corpus model `model` on `mesh` in `layout` through api::LoadPlanInputs, as the CLI does; adds a
/// test failure (and returns nullopt) on a Status.
std::optional<Planned> PlanModel(const std::string& model, const std::string& mesh, const std::string& layout) {
  api::PlanOptions flags;
  flags.config.config = testing::CorpusDir() + "/" + model + "/config.json";
  flags.mesh.axes = mesh;
  flags.tree.layout = layout;
  std::vector<Diag> diags;
  auto inputs = api::LoadPlanInputs(api::Environment::Real(), flags, &diags);
  std::string err;
  for (const Diag& diag : diags) err += diag.ToString() + "\n";
  if (!inputs.ok()) {
    ADD_FAILURE() << layout << " on " << mesh << ": " << inputs.status().ToString();
    return std::nullopt;
  }
  auto plan = planner::BuildPlan(inputs->Request());
  if (!plan.ok()) {
    ADD_FAILURE() << layout << " on " << mesh << ": " << plan.status().ToString();
    return std::nullopt;
  }
  return Planned{std::make_unique<api::PlanInputs>(std::move(*inputs)), std::move(*plan), err};
}

/// One corpus model on one mesh of Meshes().
class CorpusPlanTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {
 protected:
  void SetUp() override { EASYPLAN_SKIP_WITHOUT_CORPUS(); }
  const MeshCase& MeshOf() const { return Meshes()[static_cast<size_t>(std::get<1>(GetParam()))]; }
  std::optional<Planned> Plan(const std::string& mesh, const std::string& layout) {
    return PlanModel(std::get<0>(GetParam()), mesh, layout);
  }
};

/// One corpus model, for checks tied to one particular mesh.
class CorpusModelTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { EASYPLAN_SKIP_WITHOUT_CORPUS(); }
};

/// Shard shape of `shape` under `spec` on `mesh`, recomputed from scratch (ceil per dim).
std::vector<int64_t> ShardDims(const Shape& shape, const PartitionSpec& spec, const Mesh& mesh) {
  std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end());
  for (int d = 0; d < spec.size() && d < shape.rank(); ++d) {
    int64_t tiles = 1;
    for (const std::string& axis : spec[d]) {
      std::optional<int> k = mesh.AxisIndex(axis);
      EXPECT_TRUE(k.has_value()) << "effective spec " << spec.ToString() << " names axis " << axis;
      if (k) tiles *= mesh.shape[static_cast<size_t>(*k)];
    }
    dims[static_cast<size_t>(d)] = (dims[static_cast<size_t>(d)] + tiles - 1) / tiles;
  }
  return dims;
}

int64_t Bytes(const std::vector<int64_t>& dims, DType dtype) {
  int64_t elements = 1;
  for (int64_t d : dims) elements *= d;
  return *ByteSize(elements, DTypeBits(dtype));
}

/// Checks every layout-independent invariant of one plan; `what` prefixes failures.
void CheckInvariants(const Planned& planned, const std::string& what) {
  const planner::Plan& plan = planned.plan;
  const ParamTree& tree = *planned.inputs->tree;
  const int64_t devices = plan.mesh.NumDevices();
  ASSERT_EQ(plan.params.size(), tree.tensors.size()) << what;
  ASSERT_EQ(static_cast<int64_t>(plan.device_bytes.size()), devices) << what;

  // Errors: none but logical-indivisible, and that one only where the count really does not divide.
  for (const planner::Finding& finding : plan.findings) {
    if (finding.severity != Severity::kError) continue;
    EXPECT_EQ(finding.code, planner::FindingCode::kLogicalIndivisible)
        << what << ": " << planner::FindingCodeName(finding.code) << ": " << finding.message;
    EXPECT_FALSE(finding.notes.empty()) << what << ": logical-indivisible without the valid sizes";
  }

  // Sum over devices == sum over tensors of shard bytes x devices holding it.
  int64_t device_total = 0;
  for (int64_t bytes : plan.device_bytes) device_total += bytes;
  int64_t expected_total = 0;
  for (const planner::ParamPlan& param : plan.params) {
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(param.tensor)];
    const planner::LayoutGroup& group = plan.groups[static_cast<size_t>(param.group)];
    int64_t holders = 0;
    for (int64_t d = 0; d < devices; ++d) holders += group.HeldBy(d) ? 1 : 0;
    const std::vector<int64_t> shard = ShardDims(tensor.shape, param.effective, plan.mesh);
    for (int d = 0; d < tensor.shape.rank(); ++d) {
      // Replicate mode (the default) leaves only dims its axes divide sharded.
      ASSERT_EQ(shard[static_cast<size_t>(d)] * group.layout.tiles()[static_cast<size_t>(d)], tensor.shape[d])
          << what << ": " << tensor.name << " dim " << d << " is sharded unevenly by " << param.effective.ToString();
    }
    EXPECT_EQ(std::vector<int64_t>(group.layout.shard_shape().dims().begin(), group.layout.shard_shape().dims().end()),
              shard)
        << what << ": " << tensor.name;
    expected_total += Bytes(shard, tensor.dtype) * holders;
  }
  EXPECT_EQ(device_total, expected_total) << what;

  // Every tensor's bytes == the sum over its distinct blocks (checked once per layout group).
  std::vector<bool> seen(plan.groups.size(), false);
  for (const planner::ParamPlan& param : plan.params) {
    if (seen[static_cast<size_t>(param.group)]) continue;
    seen[static_cast<size_t>(param.group)] = true;
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(param.tensor)];
    const planner::LayoutGroup& group = plan.groups[static_cast<size_t>(param.group)];
    std::set<std::vector<planner::Range>> blocks;
    for (int64_t d = 0; d < devices; ++d) {
      if (group.HeldBy(d)) blocks.insert(group.layout.SliceOf(d));
    }
    int64_t covered = 0;
    for (const auto& block : blocks) {
      int64_t elements = 1;
      for (const planner::Range& range : block) elements *= range.second - range.first;
      covered += elements;
    }
    EXPECT_EQ(covered, *tensor.shape.NumElements()) << what << ": " << tensor.name << " " << param.effective.ToString();
    int64_t holders = 0;
    for (int64_t d = 0; d < devices; ++d) holders += group.HeldBy(d) ? 1 : 0;
    EXPECT_EQ(static_cast<int64_t>(blocks.size()) * group.Replicas(), holders)
        << what << ": " << tensor.name << ": blocks x replicas != devices holding it";
  }
}

TEST_P(CorpusPlanTest, EasyDelLayoutInvariants) {
  const MeshCase& mesh = MeshOf();
  auto planned = Plan(mesh.mesh, "easydel");
  ASSERT_TRUE(planned);
  if (mesh.moe_only && !IsMoe(planned->inputs->config())) GTEST_SKIP() << "not an MoE model";
  CheckInvariants(*planned, "easydel on " + mesh.mesh);
}

// logical-indivisible is about a dim that is sharded: one the --uneven correction already left whole
// (a vocabulary of 50257 entries on tp=2) is the uneven-replicated warning's business, not an error.
// A counted dim (heads, kv heads, experts, vocabulary) is logical-indivisible while it stays sharded,
// and also, when the uneven-dim correction replicated it, if a tensor- or expert-parallel axis was
// asked to split it: the count, not the size, decides (planner/logical_check.h CountedSpec).
TEST_P(CorpusPlanTest, LogicalIndivisibleForShardedDimsAndForTpOrEpWhateverTheSize) {
  const MeshCase& mesh = MeshOf();
  for (const char* layout : {"easydel", "hf"}) {
    auto planned = Plan(mesh.mesh, layout);
    ASSERT_TRUE(planned);
    if (mesh.moe_only && !IsMoe(planned->inputs->config())) GTEST_SKIP() << "not an MoE model";
    for (const planner::Finding& finding : planned->plan.findings) {
      if (finding.code != planner::FindingCode::kLogicalIndivisible) continue;
      const size_t at = finding.message.find(": dim ");
      ASSERT_NE(at, std::string::npos) << finding.message;
      const int dim = std::stoi(finding.message.substr(at + 6));
      const std::string hf_or_easydel_name = finding.message.substr(0, at);
      bool found = false;
      for (const planner::ParamPlan& param : planned->plan.params) {
        const TensorEntry& tensor = planned->inputs->tree->tensors[static_cast<size_t>(param.tensor)];
        const std::string& name = planned->inputs->links->empty()
                                      ? tensor.name
                                      : (*planned->inputs->links)[static_cast<size_t>(param.tensor)].rule_name;
        if (tensor.name != finding.tensor && name != hf_or_easydel_name) continue;
        found = true;
        // The dim is counted on the rule-layout (EasyDeL) tensor; for an HF tensor compare the spec
        // before the permutation by checking that some dim of the effective spec is still sharded.
        const planner::LayoutGroup& group = planned->plan.groups[static_cast<size_t>(param.group)];
        int64_t tiles = 1;
        if (planned->inputs->links->empty()) {
          tiles =
              dim < static_cast<int>(group.layout.tiles().size()) ? group.layout.tiles()[static_cast<size_t>(dim)] : 1;
        } else {
          for (int64_t t : group.layout.tiles()) tiles = std::max(tiles, t);
        }
        const bool compute_axis =
            finding.message.find("tp=") != std::string::npos || finding.message.find("ep=") != std::string::npos;
        EXPECT_TRUE(tiles > 1 || compute_axis)
            << layout << " on " << mesh.mesh << ": " << finding.message << " -- but the effective spec "
            << param.effective.ToString()
            << " leaves that dim unsharded and no tp or ep axis was asked to split it (the uneven correction "
               "replicated it: an uneven-dim warning, not a count)";
        break;
      }
      EXPECT_TRUE(found) << finding.message;
    }
  }
}

TEST_P(CorpusPlanTest, HfLayoutInvariants) {
  const MeshCase& mesh = MeshOf();
  auto planned = Plan(mesh.mesh, "hf");
  ASSERT_TRUE(planned);
  if (mesh.moe_only && !IsMoe(planned->inputs->config())) GTEST_SKIP() << "not an MoE model";
  CheckInvariants(*planned, "hf on " + mesh.mesh);
}

TEST_P(CorpusModelTest, FsdpOnlySplitsEveryColumnWiseKernelOnDimZero) {
  auto planned = PlanModel(GetParam(), Meshes()[0].mesh, "easydel");
  ASSERT_TRUE(planned);
  const int64_t fsdp = 8;
  int checked = 0;
  for (const planner::ParamPlan& param : planned->plan.params) {
    if (param.origin != planner::SpecOrigin::kRule) continue;
    const rules::Rule& rule = planned->inputs->rules->rules[static_cast<size_t>(param.rule)];
    const rules::SpecSource& source =
        param.rule_case >= 0 ? rule.cases[static_cast<size_t>(param.rule_case)].spec : rule.spec;
    const TensorEntry& tensor = planned->inputs->tree->tensors[static_cast<size_t>(param.tensor)];
    if (source.preset != "ColumnWise" || !tensor.name.ends_with("kernel") || tensor.shape.rank() < 1) continue;
    const planner::LayoutGroup& group = planned->plan.groups[static_cast<size_t>(param.group)];
    ++checked;
    if (tensor.shape[0] % fsdp == 0) {
      EXPECT_EQ(group.layout.tiles()[0], fsdp) << tensor.name << " " << tensor.shape.ToString();
      for (size_t d = 1; d < group.layout.tiles().size(); ++d) EXPECT_EQ(group.layout.tiles()[d], 1) << tensor.name;
      EXPECT_EQ(group.Replicas(), 1) << tensor.name;
    } else {
      EXPECT_EQ(group.layout.tiles()[0], 1) << tensor.name << " " << tensor.shape.ToString();
    }
  }
  EXPECT_GT(checked, 0) << "no ColumnWise kernel in the tree";
}

TEST_P(CorpusPlanTest, HfLayoutHoldsTheSameBytesPerDeviceAsEasyDel) {
  const MeshCase& mesh = MeshOf();
  auto easydel = Plan(mesh.mesh, "easydel");
  auto hf = Plan(mesh.mesh, "hf");
  ASSERT_TRUE(easydel && hf);
  const Json& config = easydel->inputs->config();
  if (mesh.moe_only && !IsMoe(config)) GTEST_SKIP() << "not an MoE model";
  if (IsFp8(config)) GTEST_SKIP() << "FP8 checkpoint: HF holds float8 weights + scales, EasyDeL dequantized weights";

  // Tensors that exist in one layout only do not take part: EasyDeL's lm_head of a tied model (the
  // checkpoint does not store it), and checkpoint-only tensors (laid out replicated, no-counterpart).
  std::set<std::string> hf_names;
  for (const TensorEntry& tensor : hf->inputs->tree->tensors) hf_names.insert(tensor.name);
  schemas::SchemaSet schemas(schemas::DataSource::Embedded());
  auto tree_template = schemas.Tree(easydel->inputs->resolved().family);
  ASSERT_TRUE(tree_template.ok() && *tree_template);
  auto expanded = schemas::ExpandTreeTemplate(**tree_template, config, schemas::TreeOptions{});
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  std::set<std::string> easydel_only;
  for (const schemas::ExpandedTensor& tensor : *expanded) {
    if (tensor.in_easydel && !tensor.in_hf) easydel_only.insert(tensor.easydel_name);
  }

  auto adjusted = [](const Planned& planned, auto skip) {
    std::vector<int64_t> bytes = planned.plan.device_bytes;
    for (const planner::ParamPlan& param : planned.plan.params) {
      if (!skip(param)) continue;
      const planner::LayoutGroup& group = planned.plan.groups[static_cast<size_t>(param.group)];
      for (size_t d = 0; d < bytes.size(); ++d) bytes[d] -= group.BytesOn(static_cast<int64_t>(d));
    }
    return bytes;
  };
  std::vector<int64_t> easydel_bytes = adjusted(*easydel, [&](const planner::ParamPlan& param) {
    return easydel_only.count(easydel->inputs->tree->tensors[static_cast<size_t>(param.tensor)].name) > 0;
  });
  std::vector<int64_t> hf_bytes = adjusted(
      *hf, [](const planner::ParamPlan& param) { return param.origin == planner::SpecOrigin::kNoCounterpart; });
  EXPECT_EQ(hf_bytes, easydel_bytes) << "on " << mesh.mesh << " (" << easydel_only.size()
                                     << " EasyDeL-only tensors set aside)";
  // Without any one-layout tensor the raw totals agree too.
  if (easydel_only.empty()) {
    EXPECT_EQ(hf->plan.device_bytes, easydel->plan.device_bytes);
  }
}

// ---- plan.schema.json against the golden `plan --format json` outputs ----

TEST(PlanJsonSchemaTest, EveryGoldenPlanJsonOutputFollowsTheSchema) {
  const fs::path source = testing::SourceDir();
  auto schema =
      ParseJsonDocument(testing::ReadTestFile((source / "schemas/json/plan.schema.json").string()), "plan.schema.json");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const Json& root = schema->root();
  EXPECT_EQ(root.value("$schema", ""), "https://json-schema.org/draft/2020-12/schema");
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(source / "tests/golden/plan")) {
    if (entry.path().extension() != ".args") continue;
    const std::string args = testing::ReadTestFile(entry.path().string());
    fs::path base = entry.path();
    base.replace_extension();
    if (args.find("\njson\n") == std::string::npos || testing::ReadTestFile(base.string() + ".exit") != "0\n") {
      continue;
    }
    std::vector<fs::path> outputs = {base.string() + ".stdout"};
    if (fs::exists(base.string() + ".files")) {
      outputs.clear();
      for (const auto& file : fs::directory_iterator(base.string() + ".files")) outputs.push_back(file.path());
    }
    for (const fs::path& output : outputs) {
      auto doc = ParseJsonDocument(testing::ReadTestFile(output.string()), output.string());
      ASSERT_TRUE(doc.ok()) << doc.status().ToString();
      std::vector<std::string> errors;
      testing::ValidateJsonSchema(root, root, doc->root(), "", errors);
      for (const std::string& error : errors) ADD_FAILURE() << output << ": " << error;
      ++checked;
    }
  }
  EXPECT_GE(checked, 5) << "expected several `plan --format json` goldens under tests/golden/plan";
}

TEST(PlanJsonSchemaTest, TheValidatorRejectsWhatTheSchemaForbids) {
  auto schema = ParseJsonDocument(
      testing::ReadTestFile((fs::path(testing::SourceDir()) / "schemas/json/plan.schema.json").string()), "s");
  ASSERT_TRUE(schema.ok());
  const Json& root = schema->root();
  Json plan = Json::parse(R"({"model_type": "x", "layout": "easydel",
      "mesh": {"axis_names": ["fsdp"], "shape": [2], "devices": 2}, "uneven": "replicate",
      "rules": {"source": "r.yaml", "layout": "easydel", "count": 1},
      "params": [{"name": "w", "shape": [4], "dtype": "float32", "rule": null, "origin": "scalar", "spec": [],
                  "effective_spec": [["fsdp", "sp"], null, "tp"], "shard_shape": [4], "replicas": 2,
                  "bytes_per_device": 16}],
      "summary": {"tensors": 1, "total_bytes": 16, "layout_groups": 1, "min_bytes_per_device": 16,
                  "median_bytes_per_device": 16, "max_bytes_per_device": 16, "worst_device": 0, "errors": 0,
                  "warnings": 0},
      "findings": []})");
  std::vector<std::string> errors;
  testing::ValidateJsonSchema(root, root, plan, "", errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  for (const char* bad : {R"(/uneven)", R"(/params/0/effective_spec/0)", R"(/mesh/devices)"}) {
    Json broken = plan;
    broken[Json::json_pointer(bad)] = Json::array({1});
    errors.clear();
    testing::ValidateJsonSchema(root, root, broken, "", errors);
    EXPECT_FALSE(errors.empty()) << bad;
  }
  Json extra = plan;
  extra["unexpected"] = 1;
  errors.clear();
  testing::ValidateJsonSchema(root, root, extra, "", errors);
  EXPECT_FALSE(errors.empty());
}

std::string PlanCaseName(const ::testing::TestParamInfo<std::tuple<std::string, int>>& param) {
  std::string name = std::get<0>(param.param).empty() ? "no_corpus" : std::get<0>(param.param);
  name += "_" + Meshes()[static_cast<size_t>(std::get<1>(param.param))].name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusModelTest, ::testing::ValuesIn(testing::CorpusModels()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param.empty() ? "no_corpus" : param.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });
INSTANTIATE_TEST_SUITE_P(Corpus, CorpusPlanTest,
                         ::testing::Combine(::testing::ValuesIn(testing::CorpusModels()),
                                            ::testing::Range(0, static_cast<int>(Meshes().size()))),
                         PlanCaseName);

}  // namespace
}  // namespace easyplan
