#include "core/json_parse.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/document_test_util.h"

namespace easyplan {
namespace {

using testing::At;
using testing::ParseJsonOrDie;

std::string JsonError(std::string_view text) {
  StatusOr<Document> doc = ParseJsonDocument(text, "config.json");
  if (doc.ok()) return "parsed: " + doc->root().dump();
  EXPECT_EQ(doc.status().kind(), ErrorKind::kBadInput);
  return doc.status().ToString();
}

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
  EXPECT_EQ(doc.LocateFirst("/a").ToString(), "config.json:1:7");  // the first value, for the warning
  EXPECT_EQ(doc.LocateFirst("/b/c").ToString(), "config.json:1:28");
  EXPECT_EQ(doc.DuplicateKeyMessage("/a"),
            "key given more than once, at config.json:1:7 and config.json:2:7; the last value is used");
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

// gtest prints a parameter with this in test names: the input as a JSON string (escaped, one line).
void PrintTo(const ErrorCase& c, std::ostream* os) {
  *os << Json(c.text).dump(-1, ' ', true, Json::error_handler_t::replace);
}

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
// ParseJsonValue: the inline values of --set.

TEST(JsonValueTest, ParsesOneJsonValue) {
  EXPECT_EQ(ParseJsonValue("8"), Json(8));
  EXPECT_EQ(ParseJsonValue(" 2.5 "), Json(2.5));
  EXPECT_EQ(ParseJsonValue("true"), Json(true));
  EXPECT_EQ(ParseJsonValue(R"("ring")"), Json("ring"));
  EXPECT_EQ(ParseJsonValue(R"({"type": "yarn", "factor": [1, 2]})"),
            (Json{{"type", "yarn"}, {"factor", Json::array({1, 2})}}));
  // null is a value, not "no value": `--set rope_scaling=null` sets null.
  const std::optional<Json> null = ParseJsonValue("null");
  ASSERT_TRUE(null.has_value());
  EXPECT_TRUE(null->is_null());
}

TEST(JsonValueTest, KeepsObjectKeysInTextOrder) {
  EXPECT_EQ(ParseJsonValue(R"({"z": 1, "a": 2})")->dump(), R"({"z":1,"a":2})");
}

TEST(JsonValueTest, TextThatIsNotOneJsonValueGivesNothing) {
  for (const char* text : {"", "ring", "[1, 2", "1 2", "{'a': 1}", "True", "1e400", "[1,]"}) {
    EXPECT_FALSE(ParseJsonValue(text).has_value()) << text;
  }
}

TEST(JsonValueTest, IntegersBeyondInt64BecomeUnsignedForTheCallerToReport) {
  const std::optional<Json> big = ParseJsonValue("9223372036854775808");
  ASSERT_TRUE(big.has_value());
  EXPECT_TRUE(big->is_number_unsigned());
  EXPECT_EQ(big->get<uint64_t>(), uint64_t{9223372036854775808u});
  EXPECT_TRUE(ParseJsonValue("-9223372036854775808")->is_number_integer());
}

}  // namespace
}  // namespace easyplan
