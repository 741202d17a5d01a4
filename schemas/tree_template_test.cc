// Parsing of parameter-tree templates (schemas/trees/*.yaml, docs/TREES.md): errors at file:line with
// a did-you-mean, and the structure a valid template parses into.
#include "schemas/tree_template.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "schemas/schema_set.h"

namespace easyplan::schemas {
namespace {

constexpr char kBlocks[] = R"yaml(blocks:
  attention:
    - {name: q.weight, shape: [hidden_size, hidden_size]}
  norm:
    - {name: norm.weight, shape: [hidden_size], kind: layernorm}
)yaml";

StatusOr<TreeTemplate> ParseTemplate(const std::string& yaml, const std::string& blocks = kBlocks) {
  return ParseTreeTemplate(yaml, "t.yaml", blocks, "_blocks.yaml");
}

// The error of parsing `yaml`, or "no error".
Diag ErrorOf(const std::string& yaml, const std::string& blocks = kBlocks) {
  auto tree = ParseTemplate(yaml, blocks);
  if (tree.ok()) return Diag{Severity::kNote, {}, "no error", {}};
  return tree.status().diag();
}

TEST(TreeTemplateTest, UnknownTensorKeyIsAnErrorAtItsLineWithDidYouMean) {
  Diag diag = ErrorOf(R"yaml(model_type: toy
tensors:
  - {name: a.weight, shape: [4, 4]}
  - {name: b.weight, shape: [4, 4], quantisable: true}
)yaml");
  EXPECT_EQ(diag.loc.file, "t.yaml");
  EXPECT_EQ(diag.loc.line, 4);
  EXPECT_NE(diag.message.find("unknown schema key 'quantisable'"), std::string::npos) << diag.message;
  EXPECT_NE(diag.message.find("did you mean 'quantizable'?"), std::string::npos) << diag.message;
}

TEST(TreeTemplateTest, UnknownGroupKeyIsAnError) {
  Diag diag = ErrorOf(R"yaml(model_type: toy
tensors:
  - for: i
    count: 2
    prefx: "l.{i}."
    tensors: [{name: a, shape: [1]}]
)yaml");
  EXPECT_EQ(diag.loc.line, 5);
  EXPECT_NE(diag.message.find("did you mean 'prefix'?"), std::string::npos) << diag.message;
}

TEST(TreeTemplateTest, UnknownTopLevelKeyIsAnError) {
  Diag diag = ErrorOf("model_type: toy\ntensor: []\n");
  EXPECT_EQ(diag.loc.line, 2);
  EXPECT_NE(diag.message.find("did you mean 'tensors'?"), std::string::npos) << diag.message;
}

TEST(TreeTemplateTest, UnknownBlockSuggestsTheClosestName) {
  Diag diag = ErrorOf(R"yaml(model_type: toy
tensors:
  - use: atention
)yaml");
  EXPECT_EQ(diag.loc.file, "t.yaml");
  EXPECT_EQ(diag.loc.line, 3);
  EXPECT_NE(diag.message.find("unknown block 'atention' (did you mean 'attention'?)"), std::string::npos)
      << diag.message;
}

TEST(TreeTemplateTest, BlockThatUsesItselfIsADepthErrorNotACrash) {
  constexpr char kSelfUsingBlock[] = R"yaml(blocks:
  loop:
    - {name: a, shape: [1]}
    - use: loop
)yaml";
  Diag diag = ErrorOf("model_type: toy\ntensors:\n  - use: loop\n", kSelfUsingBlock);
  EXPECT_EQ(diag.loc.file, "_blocks.yaml");
  EXPECT_EQ(diag.loc.line, 4);
  EXPECT_NE(diag.message.find("blocks nest deeper than 16 levels (does block 'loop' use itself?)"), std::string::npos)
      << diag.message;
}

TEST(TreeTemplateTest, MutuallyRecursiveBlocksAreADepthError) {
  Diag diag = ErrorOf(R"yaml(model_type: toy
blocks:
  ping:
    - use: pong
  pong:
    - {use: ping, prefix: "x."}
tensors:
  - use: ping
)yaml");
  EXPECT_NE(diag.message.find("blocks nest deeper than"), std::string::npos) << diag.message;
}

TEST(TreeTemplateTest, ExpertsNeedTheExpertPlaceholderInTheName) {
  Diag diag = ErrorOf(R"yaml(model_type: toy
tensors:
  - {name: experts.w1.weight, experts: num_experts, shape: [4, 4]}
)yaml");
  EXPECT_EQ(diag.loc.line, 3);
  EXPECT_NE(diag.message.find("a tensor with 'experts' must have '{expert}' in its name"), std::string::npos)
      << diag.message;
}

TEST(TreeTemplateTest, BadLayoutsAreErrors) {
  Diag unknown = ErrorOf("model_type: toy\ntensors:\n  - {name: a, shape: [1], layouts: [hf, tpu]}\n");
  EXPECT_EQ(unknown.loc.line, 3);
  EXPECT_NE(unknown.message.find("expected 'hf' or 'easydel', found \"tpu\""), std::string::npos) << unknown.message;
  Diag scalar = ErrorOf("model_type: toy\ntensors:\n  - {name: a, shape: [1], layouts: hf}\n");
  EXPECT_NE(scalar.message.find("expected a list: [hf], [easydel]"), std::string::npos) << scalar.message;
  Diag empty = ErrorOf("model_type: toy\ntensors:\n  - {name: a, shape: [1], layouts: []}\n");
  EXPECT_NE(empty.message.find("expected a list"), std::string::npos) << empty.message;
  Diag group = ErrorOf("model_type: toy\ntensors:\n  - {layouts: [jax], tensors: [{name: a, shape: [1]}]}\n");
  EXPECT_NE(group.message.find("expected 'hf' or 'easydel'"), std::string::npos) << group.message;
}

TEST(TreeTemplateTest, BadKindRoleAndDTypeAreErrors) {
  Diag kind = ErrorOf("model_type: toy\ntensors:\n  - {name: a, shape: [1], kind: rmsnorm}\n");
  EXPECT_EQ(kind.loc.line, 3);
  EXPECT_NE(kind.message.find("expected 'embedding' or 'layernorm', found 'rmsnorm'"), std::string::npos)
      << kind.message;
  // `scale` is a role the builder gives FP8 scales, not one a template writes.
  Diag role = ErrorOf("model_type: toy\ntensors:\n  - {name: a, shape: [1], role: scale}\n");
  EXPECT_NE(role.message.find("expected 'parameter' or 'buffer', found 'scale'"), std::string::npos) << role.message;
  Diag dtype = ErrorOf("model_type: toy\ntensors:\n  - {name: a, shape: [1], dtype: bfloat17}\n");
  EXPECT_NE(dtype.message.find("unknown dtype 'bfloat17'"), std::string::npos) << dtype.message;
  Diag quantizable = ErrorOf("model_type: toy\ntensors:\n  - {name: a, shape: [1], quantizable: yes please}\n");
  EXPECT_NE(quantizable.message.find("expected true or false"), std::string::npos) << quantizable.message;
}

TEST(TreeTemplateTest, ForAndCountGoTogether) {
  Diag no_count = ErrorOf(R"yaml(model_type: toy
tensors:
  - for: i
    tensors: [{name: a, shape: [1]}]
)yaml");
  EXPECT_EQ(no_count.loc.line, 3);
  EXPECT_NE(no_count.message.find("'for' and 'count' go together"), std::string::npos) << no_count.message;
  Diag no_var = ErrorOf("model_type: toy\ntensors:\n  - {count: 2, tensors: [{name: a, shape: [1]}]}\n");
  EXPECT_NE(no_var.message.find("'for' and 'count' go together"), std::string::npos) << no_var.message;
}

TEST(TreeTemplateTest, UnclosedBraceInANameIsAnError) {
  Diag tensor = ErrorOf("model_type: toy\ntensors:\n  - {name: \"layers.{i.weight\", shape: [1]}\n");
  EXPECT_EQ(tensor.loc.line, 3);
  EXPECT_NE(tensor.message.find("unclosed '{' in name 'layers.{i.weight'"), std::string::npos) << tensor.message;
  Diag prefix = ErrorOf("model_type: toy\ntensors:\n  - {prefix: \"l.{i\", tensors: [{name: a, shape: [1]}]}\n");
  EXPECT_NE(prefix.message.find("unclosed '{'"), std::string::npos) << prefix.message;
}

TEST(TreeTemplateTest, InvalidExpressionsAreErrorsAtTheirLine) {
  Diag shape = ErrorOf(R"yaml(model_type: toy
tensors:
  - name: a.weight
    shape: [hidden_size, "hidden_size +"]
)yaml");
  EXPECT_EQ(shape.loc.line, 4);
  EXPECT_EQ(shape.loc.pointer, "/tensors/0/shape/1");
  EXPECT_NE(shape.message.find("hidden_size +"), std::string::npos) << shape.message;
  Diag placeholder = ErrorOf("model_type: toy\ntensors:\n  - {name: \"l.{i +}.w\", shape: [1]}\n");
  EXPECT_NE(placeholder.message.find("in name 'l.{i +}.w'"), std::string::npos) << placeholder.message;
  Diag when = ErrorOf("model_type: toy\ntensors:\n  - {name: a, shape: [1], when: \"a ==\"}\n");
  EXPECT_EQ(when.loc.pointer, "/tensors/0/when");
  Diag let = ErrorOf("model_type: toy\ntensors:\n  - {let: {w: \"(1\"}, tensors: [{name: a, shape: [1]}]}\n");
  EXPECT_EQ(let.loc.pointer, "/tensors/0/let/w");
}

TEST(TreeTemplateTest, ExpressionKeysAcceptIntegerAndBooleanLiterals) {
  auto tree = ParseTemplate(R"yaml(model_type: toy
tensors:
  - for: i
    count: 2
    when: true
    tensors:
      - {name: "e.{expert}", experts: 8, shape: [1], when: false, easydel_when: true}
)yaml");
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  const GroupTemplate& group = *tree->root.items[0].group;
  EXPECT_EQ(group.count->text(), "2");
  EXPECT_EQ(group.when->text(), "true");
  const TensorTemplate& tensor = *group.items[0].tensor;
  EXPECT_EQ(tensor.experts->text(), "8");
  EXPECT_EQ(tensor.when->text(), "false");
  EXPECT_EQ(tensor.easydel_when->text(), "true");
  Diag list = ErrorOf("model_type: toy\ntensors:\n  - {for: i, count: [2], tensors: [{name: a, shape: [1]}]}\n");
  EXPECT_EQ(list.loc.pointer, "/tensors/0/count");
  EXPECT_NE(list.message.find("expected an expression, an integer or a boolean, found array"), std::string::npos)
      << list.message;
}

TEST(TreeTemplateTest, MalformedTensorsAreErrors) {
  Diag float_dim = ErrorOf("model_type: toy\ntensors:\n  - {name: a, shape: [1.5]}\n");
  EXPECT_NE(float_dim.message.find("expected an integer or an expression"), std::string::npos) << float_dim.message;
  Diag no_shape = ErrorOf("model_type: toy\ntensors:\n  - {name: a}\n");
  EXPECT_NE(no_shape.message.find("expected 'shape': a list of dims"), std::string::npos) << no_shape.message;
  Diag no_name = ErrorOf("model_type: toy\ntensors:\n  - {shape: [1]}\n");
  EXPECT_NE(no_name.message.find("missing required key 'name'"), std::string::npos) << no_name.message;
  Diag not_list = ErrorOf("model_type: toy\ntensors: {a: 1}\n");
  EXPECT_NE(not_list.message.find("expected a list of tensors"), std::string::npos) << not_list.message;
  Diag no_tensors = ErrorOf("model_type: toy\n");
  EXPECT_NE(no_tensors.message.find("missing required key 'tensors'"), std::string::npos) << no_tensors.message;
  Diag no_type = ErrorOf("tensors: []\n");
  EXPECT_NE(no_type.message.find("missing required key 'model_type'"), std::string::npos) << no_type.message;
  Diag bad_blocks = ErrorOf("model_type: toy\ntensors: []\n", "blocs: {}\n");
  EXPECT_EQ(bad_blocks.loc.file, "_blocks.yaml");
  EXPECT_NE(bad_blocks.message.find("did you mean 'blocks'?"), std::string::npos) << bad_blocks.message;
}

TEST(TreeTemplateTest, ParsesBlocksLetScopeAndPrefixes) {
  auto tree = ParseTemplate(R"yaml(# A toy family.
model_type: toy
blocks:
  attention:   # the template's own block wins over the shared one
    - {name: qkv.weight, shape: [3 * hidden_size, hidden_size], quantizable: true}
tensors:
  - {name: embed.weight, shape: [vocab_size, hidden_size], kind: embedding}
  - for: i
    count: num_hidden_layers
    prefix: "layers.{i}."
    easydel_prefix: "model."
    layouts: [hf]
    tensors:
      - {use: attention, when: has_attention, let: {width: 2 * hidden_size}}
      - {use: norm, scope: text_config, prefix: "ln."}
      - {name: "experts.{expert}.w.weight", experts: num_experts, shape: [width, hidden_size]}
      - {name: rotary.inv_freq, shape: [8], role: buffer, dtype: float32}
      - {name: b, shape: [], role: parameter, when: "i > 0", easydel_when: "true", layouts: [easydel, hf]}
)yaml");
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  EXPECT_EQ(tree->model_type, "toy");
  EXPECT_EQ(tree->source, "t.yaml");
  ASSERT_EQ(tree->root.items.size(), 2u);

  const TensorTemplate& embed = *tree->root.items[0].tensor;
  EXPECT_EQ(embed.name.text, "embed.weight");
  EXPECT_EQ(embed.kind, TensorKind::kEmbedding);
  ASSERT_EQ(embed.shape.size(), 2u);
  EXPECT_EQ(embed.shape[0].text(), "vocab_size");
  EXPECT_EQ(embed.loc.file, "t.yaml");
  EXPECT_EQ(embed.loc.line, 7);

  const GroupTemplate& layers = *tree->root.items[1].group;
  EXPECT_EQ(layers.var, "i");
  ASSERT_TRUE(layers.count.has_value());
  EXPECT_EQ(layers.count->text(), "num_hidden_layers");
  EXPECT_EQ(layers.prefix.text, "layers.{i}.");
  EXPECT_EQ(layers.easydel_prefix.text, "model.");
  EXPECT_TRUE(layers.in_hf);
  EXPECT_FALSE(layers.in_easydel);
  EXPECT_EQ(layers.loc.line, 8);
  ASSERT_EQ(layers.items.size(), 5u);

  // `use` becomes a group holding the block's items, with the use's own keys.
  const GroupTemplate& attention = *layers.items[0].group;
  ASSERT_TRUE(attention.when.has_value());
  EXPECT_EQ(attention.when->text(), "has_attention");
  ASSERT_EQ(attention.let.size(), 1u);
  EXPECT_EQ(attention.let[0].first, "width");
  EXPECT_EQ(attention.let[0].second.text(), "2 * hidden_size");
  ASSERT_EQ(attention.items.size(), 1u);
  EXPECT_EQ(attention.items[0].tensor->name.text, "qkv.weight");  // the template's own block
  EXPECT_TRUE(attention.items[0].tensor->quantizable);
  EXPECT_EQ(attention.items[0].tensor->loc.line, 5);

  const GroupTemplate& norm = *layers.items[1].group;
  EXPECT_EQ(norm.scope, "text_config");
  EXPECT_EQ(norm.prefix.text, "ln.");
  ASSERT_EQ(norm.items.size(), 1u);
  EXPECT_EQ(norm.items[0].tensor->kind, TensorKind::kLayerNorm);
  EXPECT_EQ(norm.items[0].tensor->loc.file, "_blocks.yaml");  // the shared block, located in its file
  EXPECT_EQ(norm.items[0].tensor->loc.line, 5);

  const TensorTemplate& experts = *layers.items[2].tensor;
  ASSERT_TRUE(experts.experts.has_value());
  EXPECT_EQ(experts.experts->text(), "num_experts");
  EXPECT_FALSE(experts.quantizable);

  const TensorTemplate& inv_freq = *layers.items[3].tensor;
  EXPECT_EQ(inv_freq.role, TensorRole::kBuffer);
  EXPECT_EQ(inv_freq.dtype, DType::kFloat32);

  const TensorTemplate& b = *layers.items[4].tensor;
  EXPECT_TRUE(b.shape.empty());
  EXPECT_EQ(b.role, TensorRole::kParameter);
  EXPECT_FALSE(b.dtype.has_value());
  EXPECT_EQ(b.when->text(), "i > 0");
  EXPECT_EQ(b.easydel_when->text(), "true");
  EXPECT_TRUE(b.in_hf);
  EXPECT_TRUE(b.in_easydel);
}

TEST(TreeTemplateTest, NameTemplateSplitsLiteralsPlaceholdersAndTheExpertSlot) {
  auto name = ParseNameTemplate("model.layers.{i + 1}.experts.{expert}.w");
  ASSERT_TRUE(name.ok()) << name.status().ToString();
  ASSERT_EQ(name->pieces.size(), 5u);
  EXPECT_EQ(name->pieces[0].literal, "model.layers.");
  EXPECT_EQ(name->pieces[1].expr->text(), "i + 1");
  EXPECT_EQ(name->pieces[2].literal, ".experts.");
  EXPECT_EQ(name->pieces[3].literal, "{expert}");  // kept literally, expanded per expert by the builder
  EXPECT_FALSE(name->pieces[3].expr.has_value());
  EXPECT_EQ(name->pieces[4].literal, ".w");
  EXPECT_EQ(name->text, "model.layers.{i + 1}.experts.{expert}.w");
}

TEST(TreeTemplateTest, EveryEmbeddedTemplateParses) {
  SchemaSet schemas(DataSource::Embedded());
  std::vector<std::string> names = schemas.TreeNames();
  EXPECT_GE(names.size(), 16u);
  for (const std::string& name : names) {
    auto tree = schemas.Tree(name);
    ASSERT_TRUE(tree.ok()) << name << ": " << tree.status().ToString();
    ASSERT_NE(*tree, nullptr) << name;
    EXPECT_EQ((*tree)->model_type, name);
    EXPECT_FALSE((*tree)->root.items.empty()) << name;
  }
}

TEST(TreeTemplateTest, EveryFamilyHasATreeTemplate) {
  SchemaSet schemas(DataSource::Embedded());
  std::vector<std::string> trees = schemas.TreeNames();
  std::vector<std::string> families = schemas.FamilyNames();
  ASSERT_FALSE(families.empty());
  for (const std::string& family : families) {
    // An alias (kimi_k2) builds the tree of the family it names.
    auto schema = schemas.Family(family);
    ASSERT_TRUE(schema.ok() && *schema != nullptr) << family;
    const std::string& tree = (*schema)->model_type;
    EXPECT_NE(std::find(trees.begin(), trees.end(), tree), trees.end()) << family << " has no schemas/trees file";
  }
}

}  // namespace
}  // namespace easyplan::schemas
