#include "core/yaml_parse.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/document_test_util.h"

namespace easyplan {
namespace {

using testing::At;

Document ParseYamlOrDie(std::string_view text) {
  StatusOr<Document> doc = ParseYamlDocument(text, "request.yaml");
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  return doc.ok() ? *doc : Document();
}

std::string YamlError(std::string_view text) {
  StatusOr<Document> doc = ParseYamlDocument(text, "request.yaml");
  if (doc.ok()) return "parsed: " + doc->root().dump();
  EXPECT_EQ(doc.status().kind(), ErrorKind::kBadInput);
  return doc.status().ToString();
}

struct YamlScalarCase {
  std::string text;  // written after "v: "
  Json expected;
};

// gtest prints a parameter with this in test names: the YAML text as a JSON string (escaped, one line).
void PrintTo(const YamlScalarCase& c, std::ostream* os) {
  *os << Json(c.text).dump(-1, ' ', true, Json::error_handler_t::replace);
}

class YamlScalarTest : public ::testing::TestWithParam<YamlScalarCase> {};

TEST_P(YamlScalarTest, ResolvesWithCoreSchema) {
  const Document doc = ParseYamlOrDie("v: " + GetParam().text + "\n");
  const Json& value = doc.root()["v"];
  const Json& expected = GetParam().expected;
  EXPECT_EQ(value.type(), expected.type()) << GetParam().text << " -> " << value.dump();
  if (expected.is_number_float() && std::isnan(expected.get<double>())) {
    EXPECT_TRUE(std::isnan(value.get<double>()));
  } else {
    EXPECT_EQ(value, expected) << GetParam().text;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, YamlScalarTest,
    ::testing::Values(
        YamlScalarCase{"", nullptr}, YamlScalarCase{"~", nullptr}, YamlScalarCase{"null", nullptr},
        YamlScalarCase{"Null", nullptr}, YamlScalarCase{"NULL", nullptr}, YamlScalarCase{"nULL", "nULL"},
        YamlScalarCase{"true", true}, YamlScalarCase{"True", true}, YamlScalarCase{"TRUE", true},
        YamlScalarCase{"false", false}, YamlScalarCase{"False", false}, YamlScalarCase{"FALSE", false},
        YamlScalarCase{"tRUE", "tRUE"}, YamlScalarCase{"yes", "yes"}, YamlScalarCase{"No", "No"},
        YamlScalarCase{"on", "on"}, YamlScalarCase{"off", "off"}, YamlScalarCase{"y", "y"}, YamlScalarCase{"42", 42},
        YamlScalarCase{"-7", -7}, YamlScalarCase{"+3", 3}, YamlScalarCase{"007", 7}, YamlScalarCase{"0", 0},
        YamlScalarCase{"9223372036854775807", INT64_MAX}, YamlScalarCase{"-9223372036854775808", INT64_MIN},
        YamlScalarCase{"0x1F", 31}, YamlScalarCase{"0x7fffffffffffffff", INT64_MAX}, YamlScalarCase{"0o17", 15},
        YamlScalarCase{"0b101", "0b101"}, YamlScalarCase{"0x", "0x"}, YamlScalarCase{"0xG", "0xG"},
        YamlScalarCase{"1_000", "1_000"}, YamlScalarCase{"1.5", 1.5}, YamlScalarCase{"-0.5", -0.5},
        YamlScalarCase{"+0.25", 0.25}, YamlScalarCase{".5", 0.5}, YamlScalarCase{"1.", 1.0},
        YamlScalarCase{"1e5", 100000.0}, YamlScalarCase{"1.e2", 100.0}, YamlScalarCase{"-.5", -0.5},
        YamlScalarCase{"1E-3", 0.001}, YamlScalarCase{"1.0e+30", 1e30}, YamlScalarCase{"1e-05", 1e-05},
        YamlScalarCase{"500000.0", 500000.0}, YamlScalarCase{".inf", INFINITY}, YamlScalarCase{".Inf", INFINITY},
        YamlScalarCase{"+.INF", INFINITY}, YamlScalarCase{"-.inf", -INFINITY}, YamlScalarCase{".nan", NAN},
        YamlScalarCase{".NaN", NAN}, YamlScalarCase{"inf", "inf"}, YamlScalarCase{"nan", "nan"},
        YamlScalarCase{"-.nan", "-.nan"}, YamlScalarCase{"1.2.3", "1.2.3"}, YamlScalarCase{"e5", "e5"},
        YamlScalarCase{".", "."}, YamlScalarCase{"12abc", "12abc"}, YamlScalarCase{"bf16", "bf16"},
        YamlScalarCase{"a b c", "a b c"}, YamlScalarCase{"'42'", "42"}, YamlScalarCase{"\"true\"", "true"},
        YamlScalarCase{"'null'", "null"}, YamlScalarCase{"''", ""}, YamlScalarCase{"!!str 42", "42"},
        YamlScalarCase{"\"\\u00e9\"", "\xC3\xA9"}, YamlScalarCase{"|\n  two\n  lines\n", "two\nlines\n"}));

TEST(YamlDocumentTest, LocateReportsMarksOneBased) {
  const Document doc = ParseYamlOrDie(
      "model:\n"
      "  name: llama\n"
      "  layers: [1, 2]\n"
      "mesh:\n"
      "  - dp: 2\n"
      "    tp: 4\n");
  EXPECT_EQ(At(doc, ""), "1:1");
  EXPECT_EQ(At(doc, "/model"), "2:3");
  EXPECT_EQ(At(doc, "/model/name"), "2:9");
  EXPECT_EQ(At(doc, "/model/layers"), "3:11");
  EXPECT_EQ(At(doc, "/model/layers/1"), "3:15");
  EXPECT_EQ(At(doc, "/mesh/0"), "5:5");
  EXPECT_EQ(At(doc, "/mesh/0/tp"), "6:9");
  EXPECT_EQ(At(doc, "/mesh/0/sp"), "5:5");
  EXPECT_EQ(doc.Locate("/mesh/0/tp").ToString(), "request.yaml:6:9");
}

TEST(YamlDocumentTest, SkipsUtf8BomWithoutCountingIt) {
  const Document doc = ParseYamlOrDie(
      "\xEF\xBB\xBF"
      "a: 1\nb: [2, 3]\n");
  EXPECT_EQ(doc.root().dump(), R"({"a":1,"b":[2,3]})");
  EXPECT_EQ(At(doc, "/a"), "1:4");
  EXPECT_EQ(At(doc, "/b/1"), "2:8");
}

TEST(YamlDocumentTest, KeysKeepFileOrderAndAreStrings) {
  const Document doc = ParseYamlOrDie("z: 1\n1: a\ntrue: b\n~: c\n\"a/b\": d\n");
  EXPECT_EQ(doc.root().dump(), R"({"z":1,"1":"a","true":"b","null":"c","a/b":"d"})");
  EXPECT_EQ(At(doc, "/a~1b"), "5:8");
}

TEST(YamlDocumentTest, DuplicateKeysLastValueWinsAndIsRecorded) {
  const Document doc = ParseYamlOrDie(
      "a:\n"
      "  x: 1\n"
      "b: 2\n"
      "a: 3\n"
      "b: 4\n"
      "b: 5\n");
  EXPECT_EQ(doc.root().dump(), R"({"a":3,"b":5})");
  EXPECT_EQ(doc.duplicate_keys(), (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(At(doc, "/a"), "4:4");
  EXPECT_EQ(At(doc, "/a/x"), "4:4");
  EXPECT_EQ(At(doc, "/b"), "6:4");
  EXPECT_EQ(doc.LocateFirst("/a").ToString(), "request.yaml:2:3");  // the first value, for the warning
  EXPECT_EQ(doc.DuplicateKeyMessage("/b"),
            "key given more than once, at request.yaml:3:4 and request.yaml:6:4; the last value is used");
}

TEST(YamlDocumentTest, AliasesAreExpanded) {
  const Document doc = ParseYamlOrDie("base: &b {k: 1}\ncopy: *b\n");
  EXPECT_EQ(doc.root()["copy"], (Json{{"k", 1}}));
}

TEST(YamlDocumentTest, EmptyOrCommentOnlyDocumentIsNull) {
  EXPECT_TRUE(ParseYamlOrDie("").root().is_null());
  EXPECT_TRUE(ParseYamlOrDie("# just a comment\n").root().is_null());
  EXPECT_TRUE(ParseYamlOrDie("---\n").root().is_null());
  EXPECT_EQ(ParseYamlOrDie("{}").root(), Json::object());
  EXPECT_EQ(ParseYamlOrDie("[]").root(), Json::array());
}

TEST(YamlDocumentTest, SyntaxErrorReportsLineAndColumn) {
  StatusOr<Document> doc = ParseYamlDocument("a: [1,\n", "cfg.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().kind(), ErrorKind::kBadInput);
  EXPECT_EQ(doc.status().diag().loc.file, "cfg.yaml");
  EXPECT_EQ(doc.status().ToString(), "cfg.yaml:2:1: error: invalid YAML: end of sequence flow not found");
  EXPECT_EQ(YamlError("a: b\n c: d\n"), "request.yaml:2:3: error: invalid YAML: illegal map value");
}

TEST(YamlDocumentTest, RejectsNonScalarKeys) {
  EXPECT_EQ(YamlError("? [1, 2]\n: 3\n"),
            "request.yaml:1:3: error: invalid YAML: a mapping key must be a scalar, not a "
            "sequence");
  EXPECT_EQ(YamlError("x:\n  ? {a: 1}\n  : 3\n"),
            "request.yaml:2:5: error: invalid YAML: a mapping key must be a scalar, not a "
            "mapping");
}

TEST(YamlDocumentTest, RejectsOutOfRangeNumbers) {
  EXPECT_EQ(YamlError("n: 9223372036854775808\n"),
            "request.yaml:1:4: error: integer 9223372036854775808 does not fit in 64 bits");
  EXPECT_EQ(YamlError("n:\n  - -9223372036854775809\n"),
            "request.yaml:2:5: error: integer -9223372036854775809 does not fit in 64 bits");
  EXPECT_EQ(YamlError("n: 0x8000000000000000\n"),
            "request.yaml:1:4: error: integer 0x8000000000000000 does not fit in 64 bits");
  EXPECT_EQ(YamlError("n: 1e400\n"), "request.yaml:1:4: error: float 1e400 does not fit in 64 bits");
  EXPECT_EQ(ParseYamlOrDie("n: 1e-400\n").root()["n"], 0.0);
}

TEST(YamlDocumentTest, RejectsMoreThanOneDocument) {
  EXPECT_EQ(YamlError("a: 1\n---\nb: 2\n"),
            "request.yaml:3:1: error: invalid YAML: expected a single document, found 2");
}

TEST(YamlDocumentTest, CountsManyDocumentsOnlySoFar) {
  std::string text;
  for (int i = 0; i < 150; ++i) text += "--- " + std::to_string(i) + "\n";
  EXPECT_EQ(YamlError(text), "request.yaml:2:5: error: invalid YAML: expected a single document, found more than 100");
}

// yaml-cpp's LoadAll never returns on these (a ',' it does not consume yields empty documents forever);
// found by fuzzing (tests/fuzz/document_fuzzer.cc).
TEST(YamlDocumentTest, RejectsAStrayCommaInsteadOfLooping) {
  EXPECT_EQ(YamlError(","), "request.yaml:1:1: error: invalid YAML: unexpected ','");
  EXPECT_EQ(YamlError("[a], b\n"), "request.yaml:1:4: error: invalid YAML: unexpected ','");
  EXPECT_EQ(YamlError("{\"a\": 1,\n    \"b\": 2\n  },\n  \"c\": 3\n}\n"),
            "request.yaml:3:4: error: invalid YAML: unexpected ','");
  EXPECT_EQ(YamlError("\"x\"\n,\n"), "request.yaml:2:1: error: invalid YAML: unexpected ','");
}

TEST(YamlDocumentTest, SharesAnchoredNodesAndKeepsTheirPositions) {
  Document doc = ParseYamlOrDie("base: &b {x: 1, y: [2, 3]}\nuse: *b\nempty:\n\"quoted\": !!str\n");
  EXPECT_EQ(doc.root()["use"], doc.root()["base"]);
  EXPECT_EQ(doc.root()["use"]["y"][1], 3);
  EXPECT_TRUE(doc.root()["empty"].is_null());
  EXPECT_EQ(doc.root()["quoted"], "");
  EXPECT_EQ(doc.Locate("/use").line, 1);
  EXPECT_EQ(doc.Locate("/use").column, 7);  // where the anchored node starts, as yaml-cpp marks it
}

TEST(YamlDocumentTest, RejectsInvalidUtf8) {
  EXPECT_EQ(YamlError("a: \"\xFF\xFE\"\n"), "request.yaml:1:4: error: invalid YAML: invalid UTF-8 in scalar");
}

TEST(YamlDocumentTest, NestingIsLimitedTo200Levels) {
  EXPECT_TRUE(ParseYamlDocument(std::string(200, '[') + std::string(200, ']'), "r.yaml").ok());
  EXPECT_EQ(YamlError(std::string(201, '[') + std::string(201, ']')),
            "request.yaml:1:201: error: invalid YAML: nesting deeper than 200 levels\n  note: the limit is 200; raise "
            "it with --max-depth N");
}

TEST(YamlDocumentTest, SelfReferentialAliasIsRejectedNotFollowedForever) {
  EXPECT_EQ(YamlError("&a [*a]\n"),
            "request.yaml:1:1: error: invalid YAML: nesting deeper than 200 levels\n  note: the limit is 200; raise it "
            "with --max-depth N");
}

TEST(YamlDocumentTest, AliasExpansionIsBounded) {
  // Each level repeats the previous one 10 times: 10^7 values once expanded.
  std::string text = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level <= 6; ++level) {
    const std::string prev = "*l" + std::to_string(level - 1);
    text += "l" + std::to_string(level) + ": &l" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) text += (i > 0 ? ", " : "") + prev;
    text += "]\n";
  }
  const std::string error = YamlError(text);
  EXPECT_NE(error.find("error: invalid YAML: document expands to more than 1000000 values "
                       "(through aliases?)"),
            std::string::npos)
      << error;
}

TEST(YamlDocumentTest, AliasExpansionIsBoundedInBytesBeforeItIsBuilt) {
  // A 16 KiB scalar used 10,000 times: 10,001 values, but 160 MiB once expanded (issue 44 item 1: a
  // 20 MB anchor used 100 times took 11.4 GB). The expansion stops at the limit, here 1 MiB, long before.
  std::string text = "a: &a " + std::string(size_t{16} << 10, 'x') + "\nb: [";
  for (int i = 0; i < 10000; ++i) text += i > 0 ? ", *a" : "*a";
  text += "]\n";
  Limits limits;
  limits.max_input_bytes = size_t{1} << 20;
  StatusOr<Document> doc = ParseYamlDocument(text, "request.yaml", limits);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().ToString(),
            "request.yaml:1:4: error: invalid YAML: document expands to more than 1048576 bytes (its scalars and their "
            "paths, each use of an alias counted again)\n  note: the limit is 1048576; raise it with "
            "--max-input-bytes N");
}

TEST(YamlDocumentTest, ExpandedBytesLimitIsTheInputLimit) {
  const std::string text = "a: &a " + std::string(300, 'x') + "\nb: [*a, *a]\n";  // 900 bytes of scalars
  Limits limits;
  limits.max_input_bytes = 1000;
  EXPECT_TRUE(ParseYamlDocument(text, "r.yaml", limits).ok());
  limits.max_input_bytes = 800;
  StatusOr<Document> doc = ParseYamlDocument(text, "r.yaml", limits);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().kind(), ErrorKind::kBadInput);
  EXPECT_NE(doc.status().ToString().find("more than 800 bytes"), std::string::npos) << doc.status().ToString();
  EXPECT_NE(doc.status().ToString().find("raise it with --max-input-bytes N"), std::string::npos);
}

TEST(YamlDocumentTest, PathsUnderALongKeyCountTowardsTheExpandedBytes) {
  // No alias: a 100 KB key over 1,000 values records 100 MB of JSON pointers (one per value's position).
  // An explicit key ("? "): yaml-cpp refuses implicit keys of 1024 characters or more.
  std::string text = "? " + std::string(100000, 'k') + "\n: [";
  for (int i = 0; i < 1000; ++i) text += i > 0 ? ", 0" : "0";
  text += "]\n";
  EXPECT_NE(YamlError(text).find("error: invalid YAML: document expands to more than 67108864 bytes"),
            std::string::npos);
}

}  // namespace
}  // namespace easyplan
