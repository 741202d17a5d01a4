#include "core/tree_json.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/tree_json_scan.h"

namespace easyplan {
namespace {

constexpr const char* kTree = R"({
  "model_type": "llama",
  "layout": "hf",
  "params": [
    {"name": "model.embed_tokens.weight", "shape": [128, 64], "dtype": "bfloat16"},
    {"name": "model.layers.0.self_attn.rotary_emb.inv_freq", "shape": [16], "dtype": "float32", "role": "buffer"},
    {"name": "model.layers.0.mlp.down_proj.weight_scale_inv", "shape": [1, 2], "dtype": "float32", "role": "scale"},
    {"name": "step", "shape": [], "dtype": "int32", "role": "parameter"}
  ],
  "total_tensors": 4,
  "total_params": 8193,
  "total_bytes": 16460
})";

// The scanner alone and ParseTreeJson: the result (tree or error) must be the reference path's.
void ExpectSameAsReference(const std::string& text, const Limits& limits = {}, int64_t max_tensors = 100) {
  StatusOr<ParamTree> reference = ParseTreeJsonDocument(text, "t.json", limits, max_tensors);
  StatusOr<ParamTree> fast = ParseTreeJson(text, "t.json", limits, max_tensors);
  ParamTree scanned;
  const bool scan_accepted = ScanTreeJson(text, limits, max_tensors, &scanned);
  ASSERT_EQ(fast.ok(), reference.ok()) << text;
  if (reference.ok()) {
    EXPECT_EQ(fast->tensors, reference->tensors) << text;
    EXPECT_EQ(fast->model_type, reference->model_type) << text;
    EXPECT_EQ(fast->layout, reference->layout) << text;
    if (scan_accepted) {
      EXPECT_EQ(scanned.tensors, reference->tensors) << text;
      EXPECT_EQ(scanned.model_type, reference->model_type) << text;
      EXPECT_EQ(scanned.layout, reference->layout) << text;
    }
  } else {
    EXPECT_EQ(fast.status().ToString(), reference.status().ToString()) << text;
    EXPECT_FALSE(scan_accepted) << "the scanner accepted what the reference path rejects: " << text << "\n"
                                << reference.status().ToString();
  }
}

TEST(TreeJsonTest, ScannerReadsTheTreeCommandsOwnOutput) {
  ParamTree tree;
  ASSERT_TRUE(ScanTreeJson(kTree, Limits{}, 100, &tree));
  EXPECT_EQ(tree.model_type, "llama");
  EXPECT_EQ(tree.layout, Layout::kHf);
  ASSERT_EQ(tree.tensors.size(), 4u);
  EXPECT_EQ(tree.tensors[0], (TensorEntry{"model.embed_tokens.weight", Shape{128, 64}, DType::kBFloat16}));
  EXPECT_EQ(tree.tensors[1].role, TensorRole::kBuffer);
  EXPECT_EQ(tree.tensors[2].role, TensorRole::kScale);
  EXPECT_EQ(tree.tensors[3].shape, Shape{});
  // Compact, and with names long enough to take the eight-bytes-at-a-time string scan.
  ASSERT_TRUE(ScanTreeJson(R"({"params":[{"name":"model.layers.10.mlp.experts.255.down_proj.weight_scale_inv",)"
                           R"("shape":[56,16],"dtype":"float32","role":"scale"}]})",
                           Limits{}, 100, &tree));
  EXPECT_EQ(tree.tensors.at(0).name, "model.layers.10.mlp.experts.255.down_proj.weight_scale_inv");
}

// The tree writer's spacing is read through literals, any other spacing token by token: same tree.
TEST(TreeJsonTest, ScannerReadsAnySpacingAlike) {
  const std::vector<std::string> spellings = {
      R"({"params": [{"name": "a.0.w", "shape": [4, 2], "dtype": "bf16", "role": "scale"}, )"
      R"({"name": "b", "shape": [], "dtype": "f32"}]})",
      R"({"params":[{"name":"a.0.w","shape":[4,2],"dtype":"bf16","role":"scale"},{"name":"b","shape":[],"dtype":"f32"}]})",
      "{ \"params\" :\n[ {\t\"role\" : \"scale\" , \"dtype\" :\"bf16\", \"shape\" : [ 4 ,2 ] ,\"name\" : "
      "\"a.0.w\" } ,\r\n{ \"dtype\": \"f32\" ,\"name\":\"b\",\"shape\":[ ] } ] }",
  };
  for (const std::string& text : spellings) {
    ParamTree tree;
    ASSERT_TRUE(ScanTreeJson(text, Limits{}, 100, &tree)) << text;
    ASSERT_EQ(tree.tensors.size(), 2u);
    EXPECT_EQ(tree.tensors[0], (TensorEntry{"a.0.w", Shape{4, 2}, DType::kBFloat16, TensorRole::kScale}));
    EXPECT_EQ(tree.tensors[1], (TensorEntry{"b", Shape{}, DType::kFloat32}));
    ExpectSameAsReference(text);
  }
}

// Dims of every digit count up to 19, each followed by each separator the grammar allows, read as the
// reference reads them (short ones take the eight-bytes-at-once conversion, long ones the loop).
TEST(TreeJsonTest, ScannerReadsDimsOfEveryLength) {
  std::mt19937_64 random(7);
  for (int digits = 1; digits <= 19; ++digits) {
    for (int trial = 0; trial < 20; ++trial) {
      std::string number(1, static_cast<char>('1' + random() % 9));
      for (int i = 1; i < digits; ++i) number += static_cast<char>('0' + random() % 10);
      if (trial == 0) number = std::string(static_cast<size_t>(digits), '9');
      if (digits == 19 && number > "9223372036854775807") number = "9223372036854775807";
      for (const char* after : {"]", ",1]", " ]", "\n]"}) {
        const std::string text = R"({"params": [{"name": "w", "shape": [)" + number + after + R"(, "dtype": "f32"}]})";
        ParamTree tree;
        ASSERT_TRUE(ScanTreeJson(text, Limits{}, 100, &tree)) << text;
        EXPECT_EQ(tree.tensors.at(0).shape[0], std::stoll(number)) << text;
        ExpectSameAsReference(text);
      }
    }
  }
  for (const std::string bad : {"01", "00", "1.5", "2e3", "7E1", "-1", "12345678901234567890"}) {
    const std::string text = R"({"params": [{"name": "w", "shape": [)" + bad + R"(], "dtype": "f32"}]})";
    ParamTree tree;
    EXPECT_FALSE(ScanTreeJson(text, Limits{}, 100, &tree)) << text;
    ExpectSameAsReference(text);
  }
}

// Names in any script: well-formed UTF-8 is read in place, at every position of a 16-byte block.
TEST(TreeJsonTest, ScannerReadsUtf8Names) {
  for (const std::string letter : {"\u00e9", "\u6f22", "\U0001F600"}) {
    for (size_t prefix = 0; prefix < 20; ++prefix) {
      const std::string name = std::string(prefix, 'n') + letter + ".weight";
      const std::string text = R"({"params": [{"name": ")" + name + R"(", "shape": [2], "dtype": "f32"}]})";
      ParamTree tree;
      ASSERT_TRUE(ScanTreeJson(text, Limits{}, 100, &tree)) << text;
      EXPECT_EQ(tree.tensors.at(0).name, name);
      ExpectSameAsReference(text);
    }
  }
}

TEST(TreeJsonTest, ScannerLeavesUnusualSpellingsToTheOtherReaders) {
  const std::vector<std::string> declined = {
      R"({"params": [{"name": "a\u00e9", "shape": [1], "dtype": "float32"}]})",  // an escape
      R"({"params": [{"name": "abcdefgh\/ijklmnop", "shape": [1], "dtype": "float32"}]})",
      "{\"params\": [{\"name\": \"a\xC3\", \"shape\": [1], \"dtype\": \"f32\"}]}",         // cut UTF-8
      "{\"params\": [{\"name\": \"\xC0\xAF\", \"shape\": [1], \"dtype\": \"f32\"}]}",      // overlong
      "{\"params\": [{\"name\": \"\xED\xA0\x80\", \"shape\": [1], \"dtype\": \"f32\"}]}",  // surrogate
      R"({"params": [{"name": "a", "shape": [1], "dtype": "float32", "extra": 1}]})",      // unknown key
      R"({"params": [{"name": "a", "shape": [1.0], "dtype": "float32"}]})",                // a fraction
      R"({"params": [{"name": "a", "shape": [1e3], "dtype": "float32"}]})",                // an exponent
      R"({"params": [{"name": "a", "shape": [9223372036854775808], "dtype": "float32"}]})",
      R"({"params": [{"name": "a", "shape": [1922337203685477580828], "dtype": "float32"}]})",  // wraps uint64
      R"({"params": [], "total_bytes": -9223372036854775808})",
  };
  for (const std::string& text : declined) {
    ParamTree tree;
    EXPECT_FALSE(ScanTreeJson(text, Limits{}, 100, &tree)) << text;
    ExpectSameAsReference(text);
  }
}

// Names of every length up to 40 (the 16- and 8-byte scans and the byte loop each end them), plain
// or with a byte the scanner must leave to the other readers at each position.
TEST(TreeJsonTest, ScannerFindsTheEndOfEveryNameAndEveryByteItMustDecline) {
  const auto tree_with = [](const std::string& name) {
    return R"({"params": [{"name": ")" + name + R"(", "shape": [2], "dtype": "f32"}]})";
  };
  for (size_t length = 1; length <= 40; ++length) {
    std::string name(length, 'a');
    for (size_t i = 0; i < length; ++i) name[i] = static_cast<char>('a' + i % 26);
    ParamTree tree;
    ASSERT_TRUE(ScanTreeJson(tree_with(name), Limits{}, 100, &tree)) << name;
    EXPECT_EQ(tree.tensors.at(0).name, name);
    for (size_t i = 0; i < length; ++i) {
      for (const char* odd : {"\\n", "\x01", "\x1f", "\xc3\xa9", "\xc3", "\x7f"}) {
        std::string changed = name;
        changed.replace(i, 1, odd);
        const std::string text = tree_with(changed);
        ParamTree scanned;
        const bool accepted = ScanTreeJson(text, Limits{}, 100, &scanned);
        // DEL (0x7F) and a whole UTF-8 sequence stay in the subset; an escape, a control character or
        // a cut UTF-8 sequence do not.
        EXPECT_EQ(accepted, std::string_view(odd) == "\x7f" || std::string_view(odd) == "\xc3\xa9")
            << i << " in " << changed;
        ExpectSameAsReference(text);
      }
    }
  }
}

TEST(TreeJsonTest, ErrorsCarryLineColumnAndPointer) {
  auto result = ParseTreeJson("{\"params\": [\n  {\"name\": \"a\", \"shape\": [1], \"dtype\": \"bfloat61\"}\n]}",
                              "t.json", Limits{}, 100);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().ToString(),
            "t.json:2:40: error: /params/0/dtype: tensor 'a': unknown dtype 'bfloat61' (did you mean 'bfloat16'?)");
  auto syntax = ParseTreeJson("{\"params\": [1,]}", "t.json", Limits{}, 100);
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.status().diag().loc.line, 1);
  EXPECT_NE(syntax.status().diag().message.find("trailing comma"), std::string::npos);
}

TEST(TreeJsonTest, AgreesWithTheReferencePathOnEdgeCases) {
  const std::vector<std::string> cases = {
      // Valid, some of them only for the reference path.
      R"({"params": []})",
      // The fast path caches each dtype spelling it parsed: spellings that alternate, a new one after
      // them, and an unknown one after known ones.
      R"({"params": [{"name": "a", "shape": [1], "dtype": "bf16"}, {"name": "b", "shape": [1], "dtype": "F8_E4M3"},
                     {"name": "c", "shape": [1], "dtype": "bf16"}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "bf16"}, {"name": "b", "shape": [1], "dtype": "bf17"}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "bf16"}, {"name": "b", "shape": [1], "dtype": "f32"},
                     {"name": "c", "shape": [1], "dtype": "bf16"}, {"name": "d", "shape": [1], "dtype": "BF16"},
                     {"name": "e", "shape": [1], "dtype": "f32"}, {"name": "f", "shape": [1], "dtype": "bf1"}]})",
      // Duplicate names, adjacent or far apart.
      R"({"params": [{"name": "a", "shape": [1], "dtype": "f32"}, {"name": "a", "shape": [1], "dtype": "f32"}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "f32"}, {"name": "b", "shape": [1], "dtype": "f32"},
                     {"name": "c", "shape": [1], "dtype": "f32"}, {"name": "b", "shape": [1], "dtype": "f32"}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": ""}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "f32"}, {"name": "b", "shape": [1], "dtype": ""}]})",
      R"({"model_type": null, "params": []})",
      "\xEF\xBB\xBF{\"params\": []}",
      R"(  {"params": [{"name": "a", "shape": [-0], "dtype": "f32"}]}  )",
      R"({"params": [{"dtype": "bf16", "shape": [0, 9223372036854775807], "name": "x"}]})",
      R"({"params": [{"name": "a\u00e9", "shape": [1], "dtype": "float32"}]})",
      R"({"params": [{"name": "a\/b", "shape": [1], "dtype": "float32"}]})",
      R"({"params": [{"name": "é", "shape": [1], "dtype": "float32"}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "float32", "extra": {"x": [1, {"y": null}]}}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "float32"}], "comment": "hi", "total_bytes": "n/a"})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "float32", "name": "b"}]})",
      R"({"params": [], "params": [{"name": "a", "shape": [1], "dtype": "float32"}]})",
      R"({"par\u0061ms": [{"name": "a", "shape": [1], "dtype": "float32"}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "\u0066loat32"}]})",
      R"({"total_tensors": 1e3, "params": []})",
      R"({"layout": "easydel", "params": []})",
      // Invalid.
      "",
      "   ",
      "[]",
      "null",
      "{}",
      R"({"params": {}})",
      R"({"params": [1]})",
      R"({"params": [{}]})",
      R"({"params": [{"name": "", "shape": [1], "dtype": "float32"}]})",
      R"({"params": [{"name": 3, "shape": [1], "dtype": "float32"}]})",
      R"({"params": [{"name": "a", "shape": 1, "dtype": "float32"}]})",
      R"({"params": [{"name": "a", "shape": [-1], "dtype": "float32"}]})",
      R"({"params": [{"name": "a", "shape": [1.0], "dtype": "float32"}]})",
      R"({"params": [{"name": "a", "shape": [1e2], "dtype": "float32"}]})",
      R"({"params": [{"name": "a", "shape": [9223372036854775808], "dtype": "float32"}]})",
      R"({"params": [{"name": "a", "shape": [1922337203685477580828], "dtype": "float32"}]})",  // wraps uint64
      R"({"params": [{"name": "a", "shape": [01], "dtype": "float32"}]})",
      R"({"params": [{"name": "a", "shape": [true], "dtype": "float32"}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "float33"}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": null}]})",
      R"({"params": [{"name": "a", "shape": [1]}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "float32", "role": "weight"}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "float32", "role": null}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "float32"}, {"name": "a", "shape": [2], "dtype": "float32"}]})",
      R"({"params": [{"name": "a\ud800", "shape": [1], "dtype": "float32"}]})",
      R"({"params": [{"name": "a\udc00", "shape": [1], "dtype": "float32"}]})",
      R"({"params": [{"name": "a\x", "shape": [1], "dtype": "float32"}]})",
      "{\"params\": [{\"name\": \"a\tb\", \"shape\": [1], \"dtype\": \"float32\"}]}",
      "{\"params\": [{\"name\": \"a\xff\", \"shape\": [1], \"dtype\": \"float32\"}]}",
      "{\"params\": [{\"name\": \"a\xed\xa0\x80\", \"shape\": [1], \"dtype\": \"float32\"}]}",
      R"({"model_type": 1, "params": []})",
      R"({"model_type": "a\ud800", "params": []})",
      R"({"layout": "flax", "params": []})",
      R"({"layout": null, "params": []})",
      R"({"params": []} {})",
      R"({"params": []}])",
      R"({"params": [],})",
      R"({"params": [1,]})",
      R"({"params": [] "x": 1})",
      R"({"params" []})",
      R"({"params": [{"name": "a" "shape": [1], "dtype": "float32"}]})",
      R"({"params": [{"name": "a", "shape": [1 2], "dtype": "float32"}]})",
      R"({"params": [{"name": "a", "shape": [1,], "dtype": "float32"}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "float32",}]})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "float32"})",
      R"({"params": [{"name": "a", "shape": [1], "dtype": "float32"}]}})",
      R"({"params": [], "total_bytes": tru})",
      R"({"params": [], "total_bytes": nul})",
      R"({"params": [], "total_bytes": 1 2})",
      R"({'params': []})",
      R"({"params": []} // comment)",
      R"({"params": [{"name": "a", "shape": [NaN], "dtype": "float32"}]})",
  };
  for (const std::string& text : cases) ExpectSameAsReference(text);
}

TEST(TreeJsonTest, LimitsAreTheReferencePathsLimits) {
  Limits shallow;
  shallow.max_depth = 3;
  ExpectSameAsReference(kTree, shallow);
  ExpectSameAsReference(R"({"params": []})", shallow);
  Limits few;
  few.max_values = 10;
  ExpectSameAsReference(kTree, few);
  for (size_t values = 25; values <= 40; ++values) {
    few.max_values = values;
    ExpectSameAsReference(kTree, few);  // the tree holds 31 values: both sides of the limit
  }
  ExpectSameAsReference(kTree, Limits{}, 3);
  ExpectSameAsReference(kTree, Limits{}, 4);
  EXPECT_NE(ParseTreeJson(kTree, "t.json", Limits{}, 3).status().diag().message.find("4 tensors exceed the limit of 3"),
            std::string::npos);
}

// Random single-byte edits of a valid tree: whatever the reference path makes of the result, the
// fast path must agree (accept the same tree, or defer and so report the same error).
TEST(TreeJsonTest, MutatedTreesAgreeWithTheReferencePath) {
  const std::string base = kTree;
  const std::string alphabet = "{}[]:,\"\\ 0123456789-+.eEnulltrfas\x01\xff\xc3";
  std::mt19937 random(20240611);
  for (int i = 0; i < 3000; ++i) {
    std::string text = base;
    const int edits = 1 + static_cast<int>(random() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = random() % text.size();
      const char c = alphabet[random() % alphabet.size()];
      switch (random() % 3) {
        case 0:
          text[at] = c;
          break;
        case 1:
          text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        default:
          text.erase(at, 1);
          break;
      }
    }
    ExpectSameAsReference(text);
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace easyplan
