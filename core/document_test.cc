#include "core/document.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace easyplan {
namespace {

using Position = Document::Position;

/// "line:column" of the value at `pointer`, for compact expectations.
std::string At(const Document& doc, std::string_view pointer) {
  const SourceLoc loc = doc.Locate(pointer);
  return std::to_string(loc.line) + ":" + std::to_string(loc.column);
}

Document ParseJsonOrDie(std::string_view text) {
  StatusOr<Document> doc = ParseJsonDocument(text, "config.json");
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  return doc.ok() ? *doc : Document();
}

Document ParseYamlOrDie(std::string_view text) {
  StatusOr<Document> doc = ParseYamlDocument(text, "request.yaml");
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  return doc.ok() ? *doc : Document();
}

std::string JsonError(std::string_view text) {
  StatusOr<Document> doc = ParseJsonDocument(text, "config.json");
  if (doc.ok()) return "parsed: " + doc->root().dump();
  EXPECT_EQ(doc.status().kind(), ErrorKind::kBadInput);
  return doc.status().ToString();
}

std::string YamlError(std::string_view text) {
  StatusOr<Document> doc = ParseYamlDocument(text, "request.yaml");
  if (doc.ok()) return "parsed: " + doc->root().dump();
  EXPECT_EQ(doc.status().kind(), ErrorKind::kBadInput);
  return doc.status().ToString();
}

// -----------------------------------------------------------------------------------------------
// PointerToken and Document

TEST(PointerTokenTest, EscapesTildeAndSlash) {
  EXPECT_EQ(PointerToken("plain"), "plain");
  EXPECT_EQ(PointerToken("a/b"), "a~1b");
  EXPECT_EQ(PointerToken("~"), "~0");
  EXPECT_EQ(PointerToken("~1/"), "~01~1");
  EXPECT_EQ(PointerToken(""), "");
}

TEST(DocumentTest, BuiltDocumentLocatesWithoutPositions) {
  const Document doc("<set>", Json{{"a", 1}});
  const SourceLoc loc = doc.Locate("/a");
  EXPECT_EQ(loc.file, "<set>");
  EXPECT_EQ(loc.pointer, "/a");
  EXPECT_EQ(loc.line, 0);
  EXPECT_EQ(loc.column, 0);
  EXPECT_EQ(doc.root()["a"], 1);
}

TEST(DocumentTest, LocateUsesGivenPositionsAndNearestAncestor) {
  const Document doc("f.json", Json::object(),
                     {{"", Position{1, 1}}, {"/a", Position{2, 8}}, {"/a/b", Position{3, 10}}});
  EXPECT_EQ(At(doc, "/a/b"), "3:10");
  EXPECT_EQ(At(doc, "/a/c/d"), "2:8");
  EXPECT_EQ(At(doc, "/zzz"), "1:1");
  EXPECT_EQ(At(doc, "not-a-pointer"), "1:1");
  EXPECT_EQ(doc.Locate("/a/c/d").pointer, "/a/c/d");
}

TEST(DocumentTest, MutableRootEditsTheValue) {
  Document doc = ParseJsonOrDie(R"({"a": 1})");
  doc.mutable_root()["b"] = 2;
  EXPECT_EQ(doc.root(), (Json{{"a", 1}, {"b", 2}}));
  EXPECT_EQ(At(doc, "/b"), "1:1");  // no position for the new key: the root's
}

// -----------------------------------------------------------------------------------------------
// JSON

TEST(JsonDocumentTest, ParsesValuesInFileOrder) {
  const Document doc = ParseJsonOrDie(R"({"z": 1, "a": [true, null, "s"], "m": {"f": 1.5}})");
  EXPECT_EQ(doc.file(), "config.json");
  EXPECT_EQ(doc.root().dump(), R"({"z":1,"a":[true,null,"s"],"m":{"f":1.5}})");
  EXPECT_TRUE(doc.duplicate_keys().empty());
}

TEST(JsonDocumentTest, LocateReportsLineAndColumnOfEachValue) {
  const Document doc = ParseJsonOrDie(
      "{\n"
      "  \"hidden_size\": 4096,\n"
      "  \"layers\": [1,\n"
      "     {\"x\": \"y\"}],\n"
      "  \"rope_scaling\": {\"factor\": 8.0}\n"
      "}\n");
  EXPECT_EQ(At(doc, ""), "1:1");
  EXPECT_EQ(At(doc, "/hidden_size"), "2:18");
  EXPECT_EQ(At(doc, "/layers"), "3:13");
  EXPECT_EQ(At(doc, "/layers/0"), "3:14");
  EXPECT_EQ(At(doc, "/layers/1"), "4:6");
  EXPECT_EQ(At(doc, "/layers/1/x"), "4:12");
  EXPECT_EQ(At(doc, "/rope_scaling/factor"), "5:30");
  const SourceLoc loc = doc.Locate("/rope_scaling/factor");
  EXPECT_EQ(loc.file, "config.json");
  EXPECT_EQ(loc.pointer, "/rope_scaling/factor");
  EXPECT_EQ(loc.ToString(), "config.json:5:30");
}

TEST(JsonDocumentTest, LocateMissingPointerFallsBackToNearestAncestor) {
  const Document doc = ParseJsonOrDie("{\n  \"rope_scaling\": {\n    \"type\": \"linear\"\n  }\n}");
  const SourceLoc loc = doc.Locate("/rope_scaling/factor/x");
  EXPECT_EQ(loc.pointer, "/rope_scaling/factor/x");
  EXPECT_EQ(loc.line, 2);
  EXPECT_EQ(loc.column, 19);
  EXPECT_EQ(At(doc, "/nope"), "1:1");
  EXPECT_EQ(At(doc, "/rope_scaling/type/0"), "3:13");
}

TEST(JsonDocumentTest, PointersUseDecodedAndEscapedKeys) {
  const Document doc = ParseJsonOrDie(R"({"a/b": 1, "~c": 2, "\u0041\ud83d\ude00": 3})");
  EXPECT_EQ(At(doc, "/a~1b"), "1:9");
  EXPECT_EQ(At(doc, "/~0c"), "1:18");
  EXPECT_EQ(At(doc, "/A\xF0\x9F\x98\x80"), "1:43");
  EXPECT_EQ(doc.root()["A\xF0\x9F\x98\x80"], 3);
}

TEST(JsonDocumentTest, ColumnsCountBytes) {
  const Document doc = ParseJsonOrDie("{\"\xC3\xA9\xC3\xA9\": \"\xE2\x82\xAC\", \"k\": 1}");
  EXPECT_EQ(At(doc, "/\xC3\xA9\xC3\xA9"), "1:10");
  EXPECT_EQ(At(doc, "/k"), "1:22");
  EXPECT_EQ(doc.root()["\xC3\xA9\xC3\xA9"], "\xE2\x82\xAC");
}

TEST(JsonDocumentTest, CrLfLineEndingsCountLines) {
  const Document doc = ParseJsonOrDie("{\r\n  \"a\": 1,\r\n  \"b\": 2\r\n}\r\n");
  EXPECT_EQ(At(doc, "/a"), "2:8");
  EXPECT_EQ(At(doc, "/b"), "3:8");
}

TEST(JsonDocumentTest, SkipsUtf8BomWithoutCountingIt) {
  const Document doc = ParseJsonOrDie("\xEF\xBB\xBF{\"a\": 1}");
  EXPECT_EQ(doc.root(), (Json{{"a", 1}}));
  EXPECT_EQ(At(doc, "/a"), "1:7");
}

TEST(JsonDocumentTest, IntegersAreInt64NeverUnsigned) {
  const Document doc = ParseJsonOrDie("[9223372036854775807, -9223372036854775808, 0, -0, 5, 1.0, 1e2]");
  const Json& root = doc.root();
  EXPECT_TRUE(root[0].is_number_integer());
  EXPECT_FALSE(root[0].is_number_unsigned());
  EXPECT_EQ(root[0].get<int64_t>(), INT64_MAX);
  EXPECT_EQ(root[1].get<int64_t>(), INT64_MIN);
  EXPECT_FALSE(root[4].is_number_unsigned());
  EXPECT_TRUE(root[5].is_number_float());
  EXPECT_TRUE(root[6].is_number_float());
  EXPECT_EQ(root[6].get<double>(), 100.0);
}

TEST(JsonDocumentTest, TinyFloatsUnderflowToZero) {
  const Document doc = ParseJsonOrDie("[1e-400, -1e-400]");
  EXPECT_EQ(doc.root()[0].get<double>(), 0.0);
  EXPECT_TRUE(std::signbit(doc.root()[1].get<double>()));
}

TEST(JsonDocumentTest, TopLevelScalarsParse) {
  EXPECT_EQ(ParseJsonOrDie(" 42 ").root(), 42);
  EXPECT_EQ(ParseJsonOrDie("\"s\"").root(), "s");
  EXPECT_EQ(ParseJsonOrDie("null").root(), nullptr);
}

TEST(JsonDocumentTest, DuplicateKeysLastValueWinsAndIsRecorded) {
  const Document doc = ParseJsonOrDie(
      "{\"a\": {\"x\": 1}, \"b\": {\"c\": 1, \"c\": 2}, \"a\": 3,\n"
      " \"a\": 4}");
  EXPECT_EQ(doc.root().dump(), R"({"a":4,"b":{"c":2}})");
  EXPECT_EQ(doc.duplicate_keys(), (std::vector<std::string>{"/b/c", "/a"}));
  EXPECT_EQ(At(doc, "/a"), "2:7");
  // "/a/x" belonged to the replaced value, so it now resolves to the new "/a".
  EXPECT_EQ(At(doc, "/a/x"), "2:7");
  EXPECT_EQ(At(doc, "/b/c"), "1:36");
}

TEST(JsonDocumentTest, SyntaxErrorReportsLineAndColumn) {
  StatusOr<Document> doc = ParseJsonDocument("{\n  \"a\": 1,\n  \"b\": 2\n  \"c\": 3\n}", "cfg.json");
  ASSERT_FALSE(doc.ok());
  const Status status = doc.status();
  const Diag& diag = status.diag();
  EXPECT_EQ(diag.loc.file, "cfg.json");
  EXPECT_EQ(diag.loc.pointer, "");
  EXPECT_EQ(diag.loc.line, 4);
  EXPECT_EQ(diag.loc.column, 3);
  EXPECT_EQ(diag.message, "invalid JSON: expected ',' or '}' after an object member");
  EXPECT_EQ(status.kind(), ErrorKind::kBadInput);
}

struct ErrorCase {
  std::string text;
  std::string error;
};

class JsonSyntaxErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(JsonSyntaxErrorTest, PinsMessageAndPosition) {
  EXPECT_EQ(JsonError(GetParam().text), GetParam().error) << "input: " << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JsonSyntaxErrorTest,
    ::testing::Values(
        ErrorCase{"", "config.json:1:1: error: invalid JSON: empty document"},
        ErrorCase{"  \n ", "config.json:2:2: error: invalid JSON: empty document"},
        ErrorCase{"\xEF\xBB\xBF", "config.json:1:1: error: invalid JSON: empty document"},
        ErrorCase{"{\"a\": 1,}", "config.json:1:9: error: invalid JSON: trailing comma before '}'"},
        ErrorCase{"[1, 2,]", "config.json:1:7: error: invalid JSON: trailing comma before ']'"},
        ErrorCase{"{\"a\": 1 \"b\": 2}",
                  "config.json:1:9: error: invalid JSON: expected ',' or '}' after an object "
                  "member"},
        ErrorCase{"[1 2]",
                  "config.json:1:4: error: invalid JSON: expected ',' or ']' after an array "
                  "element"},
        ErrorCase{"{\"a\" 1}", "config.json:1:6: error: invalid JSON: expected ':' after an object key"},
        ErrorCase{"{a: 1}",
                  "config.json:1:2: error: invalid JSON: expected a double-quoted object key, "
                  "found 'a'"},
        ErrorCase{"}", "config.json:1:1: error: invalid JSON: unexpected '}'"},
        ErrorCase{"{\"a\": }", "config.json:1:7: error: invalid JSON: unexpected '}'"},
        ErrorCase{"[\x01]", "config.json:1:2: error: invalid JSON: unexpected byte 0x01"},
        ErrorCase{"{\"a\": \"abc", "config.json:1:7: error: invalid JSON: unterminated string"},
        ErrorCase{"[\"abc\\", "config.json:1:2: error: invalid JSON: unterminated string"},
        ErrorCase{"{\"a\": [1, 2", "config.json:1:12: error: invalid JSON: unexpected end of input"},
        ErrorCase{"{\"a\"", "config.json:1:5: error: invalid JSON: unexpected end of input"},
        ErrorCase{"{\"a\": 1}\n{}",
                  "config.json:2:1: error: invalid JSON: unexpected '{' after the end of the "
                  "document"},
        ErrorCase{"{\"a\": True}",
                  "config.json:1:7: error: invalid JSON: invalid literal 'True' (JSON spells it "
                  "true)"},
        ErrorCase{"[None]",
                  "config.json:1:2: error: invalid JSON: invalid literal 'None' (JSON spells it "
                  "null)"},
        ErrorCase{"[NaN]", "config.json:1:2: error: invalid JSON: invalid literal 'NaN'"},
        ErrorCase{"[nulll]", "config.json:1:2: error: invalid JSON: invalid literal 'nulll'"},
        ErrorCase{"[01]", "config.json:1:2: error: invalid JSON: invalid number '01'"},
        ErrorCase{"[1.]", "config.json:1:2: error: invalid JSON: invalid number '1.'"},
        ErrorCase{"[-]", "config.json:1:2: error: invalid JSON: invalid number '-'"},
        ErrorCase{"[1.5.3]", "config.json:1:2: error: invalid JSON: invalid number '1.5.3'"},
        ErrorCase{"[1e]", "config.json:1:2: error: invalid JSON: invalid number '1e'"},
        ErrorCase{"[-Infinity]", "config.json:1:2: error: invalid JSON: invalid number '-Infinity'"},
        ErrorCase{"['a']",
                  "config.json:1:2: error: invalid JSON: unexpected ''' (JSON strings use double "
                  "quotes)"},
        ErrorCase{"// comment\n{}", "config.json:1:1: error: invalid JSON: unexpected '/' (JSON has no comments)"},
        ErrorCase{"[\"a\\qb\"]", "config.json:1:4: error: invalid JSON: invalid escape '\\q'"},
        ErrorCase{"[\"\\u12\"]",
                  "config.json:1:3: error: invalid JSON: invalid \\u escape (expected four hex "
                  "digits)"},
        ErrorCase{"[\"\\ud800\"]", "config.json:1:3: error: invalid JSON: unpaired surrogate in \\u escape"},
        ErrorCase{"[\"\\ud800\\u0041\"]", "config.json:1:3: error: invalid JSON: unpaired surrogate in \\u escape"},
        ErrorCase{"[\"\\udc00\"]", "config.json:1:3: error: invalid JSON: unpaired surrogate in \\u escape"},
        ErrorCase{"[\"a\tb\"]",
                  "config.json:1:4: error: invalid JSON: unescaped control character 0x09 in "
                  "string"},
        ErrorCase{"{\"a\": \"b,\n \"c\": 1}",
                  "config.json:1:10: error: invalid JSON: unescaped newline in string (missing "
                  "closing quote?)"},
        ErrorCase{"[\"\xFF\"]", "config.json:1:3: error: invalid JSON: invalid UTF-8 in string"},
        ErrorCase{"[\"\xC0\xAF\"]", "config.json:1:3: error: invalid JSON: invalid UTF-8 in string"},
        ErrorCase{"[\"\xED\xA0\x80\"]", "config.json:1:3: error: invalid JSON: invalid UTF-8 in string"},
        ErrorCase{"\xC3\xA9", "config.json:1:1: error: invalid JSON: unexpected byte 0xC3"},
        ErrorCase{"{\"n\": 9223372036854775808}",
                  "config.json:1:7: error: integer 9223372036854775808 does not fit in 64 bits"},
        ErrorCase{"[\n  -9223372036854775809]",
                  "config.json:2:3: error: integer -9223372036854775809 does not fit in 64 bits"},
        ErrorCase{"[1e400]", "config.json:1:2: error: float 1e400 does not fit in 64 bits"},
        ErrorCase{"[-1.5e308000]", "config.json:1:2: error: float -1.5e308000 does not fit in 64 bits"}));

TEST(JsonDocumentTest, NestingIsLimitedTo200Levels) {
  const std::string ok = std::string(200, '[') + std::string(200, ']');
  EXPECT_TRUE(ParseJsonDocument(ok, "config.json").ok());
  const std::string too_deep = std::string(201, '[') + std::string(201, ']');
  EXPECT_EQ(JsonError(too_deep),
            "config.json:1:201: error: invalid JSON: nesting deeper than 200 levels\n  note: the limit is 200; raise "
            "it with --max-depth N");
  const std::string objects = "{\"a\":" + std::string(200, '[') + std::string(200, ']') + "}";
  EXPECT_EQ(JsonError(objects),
            "config.json:1:205: error: invalid JSON: nesting deeper than 200 levels\n  note: the limit is 200; raise "
            "it with --max-depth N");
}

TEST(JsonDocumentTest, LongLiteralsAreShortenedInMessages) {
  const std::string digits(60, '9');
  EXPECT_EQ(JsonError("[" + digits + "]"),
            "config.json:1:2: error: integer " + std::string(37, '9') + "... does not fit in 64 bits");
}

TEST(JsonDocumentTest, DecodesEscapes) {
  const Document doc = ParseJsonOrDie(R"(["\"\\\/\b\f\n\r\t", "\u00e9\u20ac\ud83d\ude00"])");
  EXPECT_EQ(doc.root()[0], "\"\\/\b\f\n\r\t");
  EXPECT_EQ(doc.root()[1], "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
}

// -----------------------------------------------------------------------------------------------
// YAML

struct ScalarCase {
  std::string text;  // written after "v: "
  Json expected;
};

class YamlScalarTest : public ::testing::TestWithParam<ScalarCase> {};

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
        ScalarCase{"", nullptr}, ScalarCase{"~", nullptr}, ScalarCase{"null", nullptr}, ScalarCase{"Null", nullptr},
        ScalarCase{"NULL", nullptr}, ScalarCase{"nULL", "nULL"}, ScalarCase{"true", true}, ScalarCase{"True", true},
        ScalarCase{"TRUE", true}, ScalarCase{"false", false}, ScalarCase{"False", false}, ScalarCase{"FALSE", false},
        ScalarCase{"tRUE", "tRUE"}, ScalarCase{"yes", "yes"}, ScalarCase{"No", "No"}, ScalarCase{"on", "on"},
        ScalarCase{"off", "off"}, ScalarCase{"y", "y"}, ScalarCase{"42", 42}, ScalarCase{"-7", -7}, ScalarCase{"+3", 3},
        ScalarCase{"007", 7}, ScalarCase{"0", 0}, ScalarCase{"9223372036854775807", INT64_MAX},
        ScalarCase{"-9223372036854775808", INT64_MIN}, ScalarCase{"0x1F", 31},
        ScalarCase{"0x7fffffffffffffff", INT64_MAX}, ScalarCase{"0o17", 15}, ScalarCase{"0b101", "0b101"},
        ScalarCase{"0x", "0x"}, ScalarCase{"0xG", "0xG"}, ScalarCase{"1_000", "1_000"}, ScalarCase{"1.5", 1.5},
        ScalarCase{"-0.5", -0.5}, ScalarCase{"+0.25", 0.25}, ScalarCase{".5", 0.5}, ScalarCase{"1.", 1.0},
        ScalarCase{"1e5", 100000.0}, ScalarCase{"1.e2", 100.0}, ScalarCase{"-.5", -0.5}, ScalarCase{"1E-3", 0.001},
        ScalarCase{"1.0e+30", 1e30}, ScalarCase{"1e-05", 1e-05}, ScalarCase{"500000.0", 500000.0},
        ScalarCase{".inf", INFINITY}, ScalarCase{".Inf", INFINITY}, ScalarCase{"+.INF", INFINITY},
        ScalarCase{"-.inf", -INFINITY}, ScalarCase{".nan", NAN}, ScalarCase{".NaN", NAN}, ScalarCase{"inf", "inf"},
        ScalarCase{"nan", "nan"}, ScalarCase{"-.nan", "-.nan"}, ScalarCase{"1.2.3", "1.2.3"}, ScalarCase{"e5", "e5"},
        ScalarCase{".", "."}, ScalarCase{"12abc", "12abc"}, ScalarCase{"bf16", "bf16"}, ScalarCase{"a b c", "a b c"},
        ScalarCase{"'42'", "42"}, ScalarCase{"\"true\"", "true"}, ScalarCase{"'null'", "null"}, ScalarCase{"''", ""},
        ScalarCase{"!!str 42", "42"}, ScalarCase{"\"\\u00e9\"", "\xC3\xA9"},
        ScalarCase{"|\n  two\n  lines\n", "two\nlines\n"}));

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

}  // namespace
}  // namespace easyplan
