// Resolver mechanics against small in-memory schemas (the real family data is pinned by the
// conformance and golden tests).
#include "schemas/resolver.h"

#include <gtest/gtest.h>

#include "core/file_system.h"
#include "core/json_parse.h"
#include "core/yaml_parse.h"
#include "tests/test_util.h"

namespace easyplan::schemas {
namespace {

constexpr char kEasyDel[] = R"yaml(
attributes:
  - {name: sharding_axis_dims, type: "list[int]", default: [1, -1, 1, 1, 1]}
  - {name: sharding_dcn_axis_dims, type: "list[int]?", default: null}
  - {name: sharding_axis_names, type: "list[string]", default: [dp, fsdp, ep, tp, sp]}
  - {name: attn_mechanism, type: string, default: vanilla, enum: [vanilla, flash_attn2, ring]}
  - {name: blocksize_q, type: size, default: 512, init_default: 128}
  - {name: partition_axis, type: object}
  - {name: use_sharded_kv_caching, type: bool, default: false}
  - {name: kv_cache_quantization_config, type: "object?", default: null}
  - {name: backend, type: "string?", default: null}
  - {name: platform, type: "string?", default: jax, init_default_expr: "'triton' if backend == 'gpu' else 'jax'"}
  - {name: attn_dtype, type: dtype, default: float32, init_default: bfloat16}
  - {name: kvdtype, type: "dtype?", default_expr: attn_dtype, init_default_expr: attn_dtype}
  - {name: fcm_max_ratio, type: number, default: 0.0, copy_to_sub_configs: false}
  - {name: old_knob, type: bool, default: true, versions: ["aaaa1111"]}
  - {name: scan_layers, type: bool, default: false, at: {"aaaa1111": {default: true}}}
  - {name: mechanism, type: string, default: b, enum: [a, b], at: {"aaaa1111": {default: a, enum: [a]}}}
  - {name: pretraining_tp, type: int, forced: 1, copy_to_sub_configs: false}
partition_axis:
  - {name: data_parallel_axis, type: axis, default: dp}
  - {name: fully_sharded_data_parallel_axis, type: axis, default: fsdp}
  - {name: tensor_parallel_axis, type: axis, default: tp}
  - {name: batch_axis, type: axis, default_expr: "[fully_sharded_data_parallel_axis, data_parallel_axis]"}
  - {name: head_axis, type: axis, default_expr: tensor_parallel_axis}
  - {name: decode_head_axis, type: axis, default_expr: head_axis}
)yaml";

// Two versions: "bbbb2222" (the default) and an older "aaaa1111", whose attributes kEasyDel marks with `versions:` and
// `at:`.
constexpr char kVersions[] = R"yaml(
default: "bbbb2222"
versions:
  - {name: "aaaa1111", commit: "aaaa111111111111111111111111111111111111", date: "2025-01-01", rules: tables, doc: old}
  - {name: "bbbb2222", commit: "bbbb222222222222222222222222222222222222", date: "2026-01-01", rules: generated, doc: new}
)yaml";

constexpr char kBase[] = R"yaml(
model_type: _hf_base
fields:
  - {name: tie_word_embeddings, type: bool, default: true}
)yaml";

constexpr char kToy[] = R"yaml(
model_type: toy
inherits: _hf_base
attribute_map: {n_embd: hidden_size}
fields:
  - {name: hidden_size, type: size, default: 64}
  - {name: num_attention_heads, type: size, default: 4}
  - {name: num_key_value_heads, type: "size?", default: null}
  - {name: head_dim, type: "size?", default: null}
  - {name: num_hidden_layers, type: size, default: 2}
  - {name: tie_word_embeddings, type: bool, default: false}
  - {name: text_config, type: "object?", default: null}
derived:
  - {name: num_key_value_heads, when: "num_key_value_heads == null", value: num_attention_heads}
  - {name: head_dim, when: "head_dim == null", value: "hidden_size // num_attention_heads"}
  - {name: layer_types, value: "['sliding' if i % 2 == 0 else 'full' for i in range(num_hidden_layers)]"}
checks:
  - key: hidden_size
    phase: input
    require: "head_dim != null or hidden_size % num_attention_heads == 0"
    message: "hidden_size ({hidden_size}) is not divisible by num_attention_heads ({num_attention_heads}) and head_dim is not set"
  - key: num_attention_heads
    require: "num_attention_heads % num_key_value_heads == 0"
    message: "num_attention_heads ({num_attention_heads}) is not divisible by num_key_value_heads ({num_key_value_heads})"
sub_configs: {text_config: toy_text}
)yaml";

constexpr char kToyText[] = R"yaml(
model_type: toy_text
fields:
  - {name: hidden_size, type: size, default: 64}
  - {name: num_attention_heads, type: size, default: 4}
derived:
  - {name: head_dim, value: "hidden_size // num_attention_heads"}
)yaml";

constexpr char kLoop[] = R"yaml(
model_type: loop
fields:
  - {name: child, type: "object?", default: null}
sub_configs: {child: loop}
)yaml";

class ResolverTest : public ::testing::Test {
 protected:
  ResolverTest() {
    fs_.AddFile("mem/schemas/easydel.yaml", kEasyDel);
    fs_.AddFile("mem/schemas/easydel_versions.yaml", kVersions);
    fs_.AddFile("mem/schemas/families/_hf_base.yaml", kBase);
    fs_.AddFile("mem/schemas/families/toy.yaml", kToy);
    fs_.AddFile("mem/schemas/families/toy_text.yaml", kToyText);
    fs_.AddFile("mem/schemas/families/loop.yaml", kLoop);
    fs_.AddFile("mem/schemas/families/toy_alias.yaml", "model_type: toy_alias\nalias_of: toy\n");
    fs_.AddFile("mem/schemas/families/alias_of_alias.yaml", "model_type: alias_of_alias\nalias_of: toy_alias\n");
    fs_.AddFile("mem/schemas/families/self_alias.yaml", "model_type: self_alias\nalias_of: self_alias\n");
    fs_.AddFile("mem/schemas/families/alias_copy.yaml",
                "model_type: alias_copy\nalias_of: toy\nfields:\n  - {name: x, type: size, default: 1}\n");
    fs_.AddFile("mem/schemas/families/shaped.yaml", R"yaml(
model_type: shaped
fields:
  - {name: ffn_config, type: "object?", default: {experts: 16}}
  - {name: hidden_act, type: string, default: gelu}
geometry:
  num_local_experts: "ffn_config.experts"
  gated_mlp: false
)yaml");
    fs_.AddFile("mem/schemas/families/respelt.yaml", R"yaml(
model_type: respelt
inherits: shaped
dims: {experts: [moe_count]}
)yaml");
    fs_.AddFile("mem/schemas/families/respelt_read.yaml", R"yaml(
model_type: respelt_read
dims: {experts: [moe_count]}
geometry:
  moe_count: 4
)yaml");
  }

  StatusOr<ResolvedConfig> Resolve(const std::string& json, ResolveOptions options = {},
                                   std::vector<std::string> sets = {}, std::string overrides_yaml = "") {
    auto doc = ParseJsonDocument(json, "config.json");
    EXPECT_TRUE(doc.ok()) << doc.status().ToString();
    ConfigInput input{*doc, std::nullopt, std::move(sets)};
    if (!overrides_yaml.empty()) input.overrides = *ParseYamlDocument(overrides_yaml, "over.yaml");
    SchemaSet schemas(DataSource::Directory("mem", fs_));
    return ResolveConfig(input, options, schemas);
  }

  std::string ErrorOf(const std::string& json, std::vector<std::string> sets = {}, ResolveOptions options = {}) {
    auto result = Resolve(json, options, std::move(sets));
    return result.ok() ? "no error" : result.status().diag().ToString();
  }

  MemFileSystem fs_;
};

TEST_F(ResolverTest, AttributeSetAndDefaultsFollowTheEasyDelVersion) {
  auto current = Resolve(R"({"model_type": "toy"})");
  ASSERT_TRUE(current.ok()) << current.status().ToString();
  EXPECT_FALSE(current->config.contains("old_knob"));
  EXPECT_EQ(current->config["scan_layers"], false);
  EXPECT_EQ(current->config["mechanism"], "b");
  ResolveOptions options;
  options.easydel_version = "aaaa1111";
  auto old = Resolve(R"({"model_type": "toy"})", options);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->config["old_knob"], true);
  EXPECT_EQ(old->config["scan_layers"], true);
  EXPECT_EQ(old->provenance["scan_layers"], "default:easydel");
  // An enumeration is the version's own: "b" is not a mechanism of "aaaa1111".
  EXPECT_NE(ErrorOf(R"({"model_type": "toy", "mechanism": "b"})", {}, options), "no error");
  EXPECT_EQ(ErrorOf(R"({"model_type": "toy", "mechanism": "b"})"), "no error");
}

TEST_F(ResolverTest, AVersionTheFileDoesNotKnowIsAnErrorAtItsLine) {
  fs_.AddFile("mem/schemas/easydel.yaml",
              "attributes:\n  - {name: knob, type: bool, default: true, versions: [\"aaaa1112\"]}\n");
  EXPECT_EQ(ErrorOf(R"({"model_type": "toy"})"),
            "mem/schemas/easydel.yaml:2:56: error: /attributes/0/versions/0: expected an EasyDeL version of "
            "schemas/easydel_versions.yaml (aaaa1111, bbbb2222), found \"aaaa1112\" (did you mean 'aaaa1111'?)");
}

TEST_F(ResolverTest, MissingKeysGetFamilyThenEasyDelDefaults) {
  auto result = Resolve(R"({"model_type": "toy", "hidden_size": 128})");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const Json& c = result->config;
  EXPECT_EQ(c["num_attention_heads"], 4);
  EXPECT_EQ(c["tie_word_embeddings"], false);  // the family overrides the inherited base default
  EXPECT_EQ(c["blocksize_q"], 512);
  EXPECT_EQ(c["attn_dtype"], "float32");
  EXPECT_EQ(c["kvdtype"], "float32");  // defaults to attn_dtype
  EXPECT_EQ(result->provenance["hidden_size"], "file");
  EXPECT_EQ(result->provenance["num_attention_heads"], "default:toy");
  EXPECT_EQ(result->provenance["blocksize_q"], "default:easydel");
  EXPECT_EQ(result->family, "toy");
}

TEST_F(ResolverTest, DerivedFieldsAreComputedAfterDefaults) {
  auto result = Resolve(R"({"model_type": "toy", "hidden_size": 128, "num_hidden_layers": 3})");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->config["num_key_value_heads"], 4);
  EXPECT_EQ(result->config["head_dim"], 32);
  EXPECT_EQ(result->config["layer_types"], Json({"sliding", "full", "sliding"}));
  EXPECT_EQ(result->provenance["head_dim"], "derived");
}

TEST_F(ResolverTest, PresentKeyWinsAndExplicitNullIsAValue) {
  auto result = Resolve(R"({"model_type": "toy", "attn_mechanism": "ring", "kvdtype": null, "attn_dtype": "bf16"})");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->config["attn_mechanism"], "ring");
  EXPECT_EQ(result->config["kvdtype"], nullptr);
  EXPECT_EQ(result->config["attn_dtype"], "bfloat16");  // canonical dtype name
}

TEST_F(ResolverTest, InitProfileUsesConstructorDefaults) {
  ResolveOptions options;
  options.profile = DefaultsProfile::kInit;
  auto result = Resolve(R"({"model_type": "toy", "backend": "gpu"})", options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->config["blocksize_q"], 128);
  EXPECT_EQ(result->config["attn_dtype"], "bfloat16");
  EXPECT_EQ(result->config["kvdtype"], "bfloat16");
  EXPECT_EQ(result->config["platform"], "triton");
}

TEST_F(ResolverTest, PrecedenceIsFileThenOverridesThenSet) {
  auto result = Resolve(R"({"model_type": "toy", "hidden_size": 128, "num_attention_heads": 8})", {},
                        {"num_attention_heads=16"}, "hidden_size: 256\nnum_attention_heads: 2\n");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->config["hidden_size"], 256);
  EXPECT_EQ(result->config["num_attention_heads"], 16);
  EXPECT_EQ(result->config["head_dim"], 16);  // derived after overrides
  EXPECT_EQ(result->provenance["hidden_size"], "overrides");
  EXPECT_EQ(result->provenance["num_attention_heads"], "set");
}

// issue 36: outputs never print inf or NaN, and a YAML overrides file is the one input that can hold one.
TEST_F(ResolverTest, NonFiniteOverrideIsRefusedWhereItIsWritten) {
  auto result = Resolve(R"({"model_type": "toy"})", {}, {}, "hidden_size: 64\nrope: {theta: [1.0, .inf]}\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().diag().ToString(),
            "over.yaml:2:21: error: /rope/theta/1: expected a finite number, found .inf");
  result = Resolve(R"({"model_type": "toy"})", {}, {}, "rope_theta: .nan\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().diag().message, "expected a finite number, found .nan");
}

TEST_F(ResolverTest, AliasFillsStoredNameAndBothArePresent) {
  auto result = Resolve(R"({"model_type": "toy", "n_embd": 96})");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->config["hidden_size"], 96);
  EXPECT_EQ(result->config["n_embd"], 96);
  EXPECT_EQ(result->provenance["n_embd"], "file");
}

TEST_F(ResolverTest, FileKeysKeepFileOrderThenAddedKeysInSchemaOrder) {
  auto result = Resolve(R"({"zeta": 1, "model_type": "toy", "alpha": 2})");
  ASSERT_TRUE(result.ok());
  std::vector<std::string> keys;
  for (const auto& item : result->config.items()) keys.push_back(item.key());
  ASSERT_GE(keys.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + 5),
            (std::vector<std::string>{"zeta", "model_type", "alpha", "hidden_size", "n_embd"}));
  EXPECT_EQ(keys.back(), "pretraining_tp");
}

TEST_F(ResolverTest, PartitionAxisIsResolvedFromTheGivenNames) {
  auto result = Resolve(R"({"model_type": "toy", "partition_axis": {"tensor_parallel_axis": "model"}})");
  ASSERT_TRUE(result.ok());
  const Json& axis = result->config["partition_axis"];
  EXPECT_EQ(axis["head_axis"], "model");
  EXPECT_EQ(axis["decode_head_axis"], "model");
  EXPECT_EQ(axis["batch_axis"], Json({"fsdp", "dp"}));
  ASSERT_EQ(result->diags.size(), 3u);  // model is not a mesh axis: warned for each field using it
}

TEST_F(ResolverTest, SubConfigGetsItsFamilyAndTheParentsEasyDelAttributes) {
  auto result = Resolve(R"({"model_type": "toy", "attn_mechanism": "ring", "text_config": {"hidden_size": 32}})");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const Json& text = result->config["text_config"];
  EXPECT_EQ(text["head_dim"], 8);
  EXPECT_EQ(text["attn_mechanism"], "ring");
  EXPECT_EQ(text["partition_axis"]["head_axis"], "tp");
}

TEST_F(ResolverTest, DevicesFillsTheMinusOne) {
  ResolveOptions options;
  options.devices = 8;
  auto result = Resolve(R"({"model_type": "toy", "sharding_axis_dims": [1, -1, 1, 2, 1]})", options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->config["sharding_axis_dims"], Json({1, 4, 1, 2, 1}));
  EXPECT_EQ(result->provenance["sharding_axis_dims"], "derived");
}

TEST_F(ResolverTest, WrongTypeNamesFileLineAndPointer) {
  EXPECT_EQ(ErrorOf("{\"model_type\": \"toy\",\n  \"hidden_size\": \"4096\"}"),
            "config.json:2:18: error: /hidden_size: expected a positive integer, found string \"4096\"");
}

TEST_F(ResolverTest, NonPositiveSizeIsRejected) {
  EXPECT_EQ(ErrorOf(R"({"model_type": "toy", "num_attention_heads": 0})"),
            "config.json:1:46: error: /num_attention_heads: expected a positive integer, found 0");
}

TEST_F(ResolverTest, IndivisibleHiddenSizeWithoutHeadDimIsRejected) {
  EXPECT_EQ(ErrorOf(R"({"model_type": "toy", "hidden_size": 100, "num_attention_heads": 8})"),
            "config.json:1:38: error: /hidden_size: hidden_size (100) is not divisible by num_attention_heads (8) "
            "and head_dim is not set");
}

TEST_F(ResolverTest, HeadsNotDivisibleByKvHeadsIsRejected) {
  EXPECT_EQ(ErrorOf(R"({"model_type": "toy", "num_attention_heads": 4, "num_key_value_heads": 3})"),
            "config.json:1:46: error: /num_attention_heads: num_attention_heads (4) is not divisible by "
            "num_key_value_heads (3)");
}

TEST_F(ResolverTest, EnumValueGetsDidYouMeanAndTheAcceptedList) {
  EXPECT_EQ(ErrorOf(R"({"model_type": "toy", "attn_mechanism": "flash"})"),
            "config.json:1:41: error: /attn_mechanism: attn_mechanism \"flash\" is not one EasyDeL accepts (did you "
            "mean \"flash_attn2\"?)\n  note: expected one of \"vanilla\", \"flash_attn2\", \"ring\"");
}

TEST_F(ResolverTest, MeshErrorsStateTheNumbers) {
  EXPECT_EQ(ErrorOf(R"({"sharding_axis_dims": [1, -1, -1, 1, 1]})"),
            "config.json:1:24: error: /sharding_axis_dims: sharding_axis_dims [1, -1, -1, 1, 1] has 2 entries of -1; "
            "at most one axis can take the remaining devices");
  EXPECT_EQ(ErrorOf(R"({"sharding_axis_dims": [1, -1, 1, 1]})"),
            "config.json:1:24: error: /sharding_axis_dims: sharding_axis_dims has 4 entries but sharding_axis_names "
            "has 5 [\"dp\",\"fsdp\",\"ep\",\"tp\",\"sp\"]");
  EXPECT_EQ(ErrorOf(R"({"sharding_axis_names": ["dp", "tp", "tp", "a", "b"]})"),
            "config.json:1:38: error: /sharding_axis_names/2: axis name 'tp' appears twice in "
            "[\"dp\",\"tp\",\"tp\",\"a\",\"b\"]");
  ResolveOptions options;
  options.devices = 8;
  EXPECT_EQ(ErrorOf(R"({"sharding_axis_dims": [1, 3, 1, -1, 1]})", {}, options),
            "config.json:1:24: error: /sharding_axis_dims: cannot fill the -1 in sharding_axis_dims "
            "[1, 3, 1, -1, 1] for 8 devices: 8 is not divisible by the product of the other axes (3)");
}

TEST_F(ResolverTest, TypoOfAKnownKeyIsAWarning) {
  auto result = Resolve(R"({"model_type": "toy", "num_attention_head": 8})");
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->diags.size(), 1u);
  EXPECT_EQ(result->diags[0].ToString(),
            "config.json:1:45: warning: /num_attention_head: unknown key 'num_attention_head' (did you mean "
            "'num_attention_heads'?); it is kept as given and has no effect");
  EXPECT_EQ(result->config["num_attention_head"], 8);  // passed through, as HF does
}

TEST_F(ResolverTest, UnknownFamilyStillResolvesBaseDefaultsWithAWarning) {
  auto result = Resolve(R"({"model_type": "tyo", "custom": 1})");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->family, "");
  EXPECT_EQ(result->config["tie_word_embeddings"], true);
  EXPECT_EQ(result->config["blocksize_q"], 512);
  ASSERT_EQ(result->diags.size(), 1u);
  EXPECT_EQ(
      result->diags[0].message,
      "unknown model_type 'tyo' (did you mean 'toy'?); only the EasyDeL and transformers base defaults are applied");
}

TEST_F(ResolverTest, SetErrorsNameTheFlag) {
  EXPECT_EQ(ErrorOf(R"({"model_type": "toy"})", {"hidden_size"}),
            "--set hidden_size: error: expected KEY=VALUE, found no '='\n  note: example: --set rope_scaling.factor=8");
  EXPECT_EQ(ErrorOf(R"({"model_type": "toy"})", {"hidden_size=abc"}),
            "--set hidden_size=abc: error: /hidden_size: expected a positive integer, found string \"abc\"");
}

TEST_F(ResolverTest, ForcedAttributeReplacesTheFileValueWithAWarning) {
  auto result = Resolve(R"({"model_type": "toy", "pretraining_tp": 2})");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->config["pretraining_tp"], 1);
  ASSERT_EQ(result->diags.size(), 1u);
  EXPECT_EQ(result->diags[0].message, "pretraining_tp 2 is replaced by 1: EasyDeLBaseConfig always sets it");
}

TEST_F(ResolverTest, SelfReferentialSubConfigsStopWithAnError) {
  EXPECT_EQ(ErrorOf(R"({"model_type": "loop"})"),
            "config.json: error: /child/child/child/child/child: sub-configs nest deeper than 4 levels; the schemas' "
            "sub_configs form a cycle through 'loop'");
}

TEST_F(ResolverTest, TopLevelMustBeAnObject) {
  EXPECT_EQ(ErrorOf("[1, 2]"), "config.json:1:1: error: expected a JSON object at the top level, found array");
}

}  // namespace
}  // namespace easyplan::schemas

namespace easyplan::schemas {
namespace {

TEST_F(ResolverTest, AliasResolvesWithTheFamilyItNamesAndSaysSo) {
  auto resolved = Resolve(R"({"model_type": "toy_alias", "hidden_size": 32})");
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  EXPECT_EQ(resolved->family, "toy");
  EXPECT_EQ(resolved->config["model_type"], "toy_alias");  // the file's own model_type stays
  EXPECT_EQ(resolved->config["head_dim"], 8);              // toy's derived fields
  ASSERT_FALSE(resolved->diags.empty());
  EXPECT_EQ(resolved->diags[0].severity, Severity::kNote);
  EXPECT_NE(resolved->diags[0].message.find("alias of 'toy'"), std::string::npos);
}

TEST_F(ResolverTest, AliasOfAnAliasOrItselfOrWithFieldsIsAnError) {
  EXPECT_NE(ErrorOf(R"({"model_type": "alias_of_alias"})").find("itself an alias"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"model_type": "self_alias"})").find("not another family"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"model_type": "alias_copy"})").find("fields"), std::string::npos);
}

TEST_F(ResolverTest, GeometryIsEvaluatedBesideTheConfigNotIntoIt) {
  auto resolved = Resolve(R"({"model_type": "shaped", "ffn_config": {"experts": 8}})");
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  EXPECT_FALSE(resolved->config.contains("num_local_experts"));
  EXPECT_FALSE(resolved->config.contains("gated_mlp"));
  EXPECT_EQ(resolved->geometry[""]["num_local_experts"], 8);
  EXPECT_EQ(resolved->geometry[""]["gated_mlp"], false);
}

TEST_F(ResolverTest, EachConfigObjectGetsTheSharedDimKeysWithItsFamilysOwn) {
  auto resolved = Resolve(R"({"model_type": "respelt_read", "moe_count": 2})");
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  const DimKeys& keys = resolved->dim_keys.at("");
  EXPECT_EQ(keys.Keys(Dim::kExperts), std::vector<std::string>{"moe_count"});
  EXPECT_EQ(keys.Keys(Dim::kNormEps),  // no schemas/dims.yaml under mem/: the built-in one
            (std::vector<std::string>{"rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps"}));
  auto plain = Resolve(R"({"model_type": "toy"})");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->dim_keys.at("").Keys(Dim::kExperts),
            (std::vector<std::string>{"n_routed_experts", "num_local_experts", "num_experts"}));
}

TEST_F(ResolverTest, AGeometryEntryNoDimReadsIsAnErrorAtItsSchemaLine) {
  // respelt reads its experts from moe_count, so the num_local_experts it inherits from shaped's
  // geometry would be read by nothing.
  const std::string error = ErrorOf(R"({"model_type": "respelt"})");
  EXPECT_NE(error.find("mem/schemas/families/shaped.yaml:"), std::string::npos) << error;
  EXPECT_NE(error.find("/geometry/num_local_experts"), std::string::npos) << error;
  EXPECT_NE(error.find("geometry 'num_local_experts' is no key a dim is read from"), std::string::npos) << error;
}

// docs/SCHEMAS.md ("Every check") lists each check of every built-in family, so the page cannot fall
// behind a schema file (issue 36: "the docs list every check").
TEST(FamilyChecksTest, EveryBuiltInCheckIsListedInSchemasMd) {
  const std::string doc = testing::ReadTestFile(testing::SourceDir() + "/docs/SCHEMAS.md");
  SchemaSet schemas(DataSource::Embedded());
  for (const std::string& name : schemas.FamilyNames()) {
    StatusOr<const FamilySchema*> family = schemas.Family(name);
    ASSERT_TRUE(family.ok()) << family.status().ToString();
    if (*family == nullptr || (*family)->model_type != name) continue;  // an alias runs its target's checks
    for (const CheckSpec& check : (*family)->checks) {
      std::string require;
      for (char c : check.require.text()) require += c == '|' ? std::string("\\|") : std::string(1, c);
      const std::string row = "| " + name + " | `" + check.key + "` | `" + require + "`";
      EXPECT_NE(doc.find(row), std::string::npos)
          << "docs/SCHEMAS.md has no row " << row << " (" << check.loc.ToString() << ")";
    }
  }
}

}  // namespace
}  // namespace easyplan::schemas
