#include "core/emit.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/document.h"
#include "core/human.h"
#include "core/json.h"
#include "core/json_parse.h"
#include "core/yaml_parse.h"

namespace easyplan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Equality that also requires equal kinds (integer 1 vs float 1.0; signed and unsigned integers
/// are both "integer"), NaN == NaN, equal signs of zero, and equal key order.
::testing::AssertionResult SameJson(const Json& a, const Json& b, const std::string& path = "") {
  if (std::string_view(JsonTypeName(a)) != JsonTypeName(b)) {
    return ::testing::AssertionFailure() << "at '" << path << "': " << JsonTypeName(a) << " " << a.dump() << " vs "
                                         << JsonTypeName(b) << " " << b.dump();
  }
  if (a.is_number_float()) {
    const double x = a.get<double>(), y = b.get<double>();
    const bool same = (std::isnan(x) && std::isnan(y)) || (x == y && std::signbit(x) == std::signbit(y));
    if (!same) return ::testing::AssertionFailure() << "at '" << path << "': " << x << " vs " << y;
    return ::testing::AssertionSuccess();
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return ::testing::AssertionFailure() << "at '" << path << "': size";
    auto it = b.begin();
    for (const auto& [key, value] : a.items()) {
      if (key != it.key()) {
        return ::testing::AssertionFailure() << "at '" << path << "': key '" << key << "' vs '" << it.key() << "'";
      }
      ::testing::AssertionResult inner = SameJson(value, it.value(), path + "/" + key);
      if (!inner) return inner;
      ++it;
    }
    return ::testing::AssertionSuccess();
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return ::testing::AssertionFailure() << "at '" << path << "': size";
    for (size_t i = 0; i < a.size(); ++i) {
      ::testing::AssertionResult inner = SameJson(a[i], b[i], path + "/" + std::to_string(i));
      if (!inner) return inner;
    }
    return ::testing::AssertionSuccess();
  }
  if (a != b) return ::testing::AssertionFailure() << "at '" << path << "': " << a << " vs " << b;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult YamlRoundTrips(const Json& value) {
  const std::string yaml = EmitYaml(value);
  StatusOr<Document> doc = ParseYamlDocument(yaml, "emitted.yaml");
  if (!doc.ok()) {
    return ::testing::AssertionFailure() << doc.status().ToString() << "\nyaml:\n" << yaml;
  }
  ::testing::AssertionResult same = SameJson(value, doc->root());
  if (!same) same << "\nyaml:\n" << yaml;
  return same;
}

// -----------------------------------------------------------------------------------------------
// EmitJson

TEST(EmitJsonTest, IndentsByTwoKeepsKeyOrderAndEndsWithNewline) {
  Json value = Json::object();
  value["z"] = 1;
  value["a"] = Json::array({true, nullptr, "s"});
  value["m"] = Json{{"f", 1.5}};
  value["e"] = Json::object();
  value["ea"] = Json::array();
  EXPECT_EQ(EmitJson(value),
            "{\n"
            "  \"z\": 1,\n"
            "  \"a\": [\n"
            "    true,\n"
            "    null,\n"
            "    \"s\"\n"
            "  ],\n"
            "  \"m\": {\n"
            "    \"f\": 1.5\n"
            "  },\n"
            "  \"e\": {},\n"
            "  \"ea\": []\n"
            "}\n");
}

TEST(EmitJsonTest, RendersNumbersAsNlohmannDoes) {
  EXPECT_EQ(EmitJson(Json::array({500000.0, 1e-05, 1e30, -0.0, 0.1, 42, -7})),
            "[\n  500000.0,\n  1e-05,\n  1e+30,\n  -0.0,\n  0.1,\n  42,\n  -7\n]\n");
}

// issue 36: a NaN or an infinity in an output is a bug, an internal error naming where it is, never
// `null` in JSON or `.inf` in YAML (nor `inf s` in a table).
TEST(EmitJsonTest, NonFiniteNumberIsAnInternalErrorNamingItsPointer) {
  const Json estimate = {{"estimate", {{"layers", Json::array({1.5, kInf})}}}};
  for (const auto& emit : {EmitJson, EmitYaml}) {
    try {
      (void)emit(estimate);
      ADD_FAILURE() << "an infinity was emitted";
    } catch (const NonFiniteFigure& e) {
      EXPECT_EQ(std::string(e.what()),
                "the output's /estimate/layers/1 is inf: easyplan computed a figure that is not a finite number, "
                "which is a bug, not a fault of the input (please report the command line)");
    }
  }
  EXPECT_THROW((void)EmitJson(Json::array({kNaN})), NonFiniteFigure);
  EXPECT_THROW((void)EmitYaml(-kInf), NonFiniteFigure);
  EXPECT_NO_THROW((void)EmitJson(Json::array({std::numeric_limits<double>::max(), 5e-324})));
}

TEST(EmitJsonTest, KeepsUtf8AndEscapesControlCharacters) {
  EXPECT_EQ(EmitJson(Json{{"\xC3\xA9", "\xE2\x82\xAC\n\x01\""}}),
            "{\n  \"\xC3\xA9\": \"\xE2\x82\xAC\\n\\u0001\\\"\"\n}\n");
}

TEST(EmitJsonTest, ReplacesInvalidUtf8InsteadOfThrowing) {
  EXPECT_EQ(EmitJson(Json("a\xFF"
                          "b")),
            "\"a\xEF\xBF\xBD"
            "b\"\n");
}

TEST(EmitJsonTest, TopLevelScalarsAndEmptyContainers) {
  EXPECT_EQ(EmitJson(Json(42)), "42\n");
  EXPECT_EQ(EmitJson(Json(nullptr)), "null\n");
  EXPECT_EQ(EmitJson(Json::object()), "{}\n");
  EXPECT_EQ(EmitJson(Json::array()), "[]\n");
}

TEST(EmitJsonTest, RoundTripsThroughParseJsonDocument) {
  const Json value = Json::parse(R"({"a": [1, -1, 2.5, 1e-05, "x\ny", {"b": null}], "c": {}, "\u00e9": [[], [true]]})");
  StatusOr<Document> doc = ParseJsonDocument(EmitJson(value), "out.json");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_TRUE(SameJson(value, doc->root()));
}

// -----------------------------------------------------------------------------------------------
// EmitYaml: layout

TEST(EmitYamlTest, WritesBlockMappingsFlowScalarSequencesAndDashItems) {
  const Json value = Json::parse(R"({
    "model_type": "llama",
    "mesh_shape": [1, -1, 1, 1, 1],
    "rope_scaling": {"factor": 8.0, "type": "llama3"},
    "params": [
      {"name": "model/embed_tokens/embedding", "spec": ["fsdp", "tp"], "shape": [128256, 4096]},
      {"name": "lm_head/kernel", "spec": [null, "tp"]}
    ],
    "empty_map": {},
    "empty_list": [],
    "nested": [[1, 2], [3, [4]], [], {}, [{"a": 1}]]
  })");
  EXPECT_EQ(EmitYaml(value),
            "model_type: llama\n"
            "mesh_shape: [1, -1, 1, 1, 1]\n"
            "rope_scaling:\n"
            "  factor: 8.0\n"
            "  type: llama3\n"
            "params:\n"
            "  - name: model/embed_tokens/embedding\n"
            "    spec: [fsdp, tp]\n"
            "    shape: [128256, 4096]\n"
            "  - name: lm_head/kernel\n"
            "    spec: [null, tp]\n"
            "empty_map: {}\n"
            "empty_list: []\n"
            "nested:\n"
            "  - [1, 2]\n"
            "  - - 3\n"
            "    - [4]\n"
            "  - []\n"
            "  - {}\n"
            "  - - a: 1\n");
  EXPECT_TRUE(YamlRoundTrips(value));
}

TEST(EmitYamlTest, DeeplyNestedMappingsIndentByTwo) {
  const Json value = Json::parse(R"({"a": {"b": [{"c": [1, {"d": 2}], "e": "f"}]}})");
  EXPECT_EQ(EmitYaml(value),
            "a:\n"
            "  b:\n"
            "    - c:\n"
            "        - 1\n"
            "        - d: 2\n"
            "      e: f\n");
  EXPECT_TRUE(YamlRoundTrips(value));
}

TEST(EmitYamlTest, FlowSequenceMustFitIn80Columns) {
  // "k: [" + s + "]" is 5 + |s| columns.
  const std::string fits(75, 'a'), too_long(76, 'a');
  EXPECT_EQ(EmitYaml(Json{{"k", Json::array({fits})}}), "k: [" + fits + "]\n");
  EXPECT_EQ(EmitYaml(Json{{"k", Json::array({too_long})}}), "k:\n  - " + too_long + "\n");
  // At top level there is no head: "[" + s + "]".
  EXPECT_EQ(EmitYaml(Json::array({std::string(78, 'b')})), "[" + std::string(78, 'b') + "]\n");
  EXPECT_EQ(EmitYaml(Json::array({std::string(79, 'b')})), "- " + std::string(79, 'b') + "\n");
  // Inside a sequence the head is the indented dash.
  const Json nested = Json::array({Json::array({std::string(76, 'c')})});
  EXPECT_EQ(EmitYaml(nested), "- [" + std::string(76, 'c') + "]\n");
  const Json nested_long = Json::array({Json::array({std::string(77, 'c')})});
  EXPECT_EQ(EmitYaml(nested_long), "- - " + std::string(77, 'c') + "\n");
}

TEST(EmitYamlTest, SequencesWithContainersUseBlockStyle) {
  EXPECT_EQ(EmitYaml(Json::array({1, Json::array()})), "- 1\n- []\n");
  EXPECT_EQ(EmitYaml(Json::array({1, Json::object({{"a", 1}})})), "- 1\n- a: 1\n");
}

TEST(EmitYamlTest, TopLevelScalarsAndEmptyContainers) {
  EXPECT_EQ(EmitYaml(Json(nullptr)), "null\n");
  EXPECT_EQ(EmitYaml(Json(true)), "true\n");
  EXPECT_EQ(EmitYaml(Json(false)), "false\n");
  EXPECT_EQ(EmitYaml(Json(-42)), "-42\n");
  EXPECT_EQ(EmitYaml(Json(1.5)), "1.5\n");
  EXPECT_EQ(EmitYaml(Json("hello")), "hello\n");
  EXPECT_EQ(EmitYaml(Json("two words")), "\"two words\"\n");
  EXPECT_EQ(EmitYaml(Json::object()), "{}\n");
  EXPECT_EQ(EmitYaml(Json::array()), "[]\n");
}

TEST(EmitYamlTest, KeysFollowTheStringQuotingRule) {
  Json value = Json::object();
  value[""] = 1;
  value["a b"] = 2;
  value["1"] = 3;
  value["null"] = 4;
  value["ok_key"] = 5;
  value["yes"] = 6;
  EXPECT_EQ(EmitYaml(value), "\"\": 1\n\"a b\": 2\n\"1\": 3\n\"null\": 4\nok_key: 5\n\"yes\": 6\n");
  EXPECT_TRUE(YamlRoundTrips(value));
}

// YAML limits implicit keys to 1024 characters; yaml-cpp refused the emitted text ("illegal map
// value"). Found by fuzzing (tests/fuzz/document_fuzzer.cc).
TEST(EmitYamlTest, LongKeysAreWrittenExplicitly) {
  const std::string long_key(1500, 'k');
  Json value = Json::object();
  value[long_key] = 1;
  value["short"] = 2;
  EXPECT_EQ(EmitYaml(value), "? " + long_key + "\n: 1\nshort: 2\n");
  EXPECT_TRUE(YamlRoundTrips(value));

  Json nested = Json::object();
  nested["a"][long_key]["x"] = Json::array({Json::object({{long_key, Json::array({1, 2})}, {"b", 1}})});
  nested["l"] = Json::array({Json::object({{long_key, Json::object({{"z", Json::array({1})}})}})});
  nested[std::string(1001, 'q') + " spaced"] = Json::array({Json::array({1}), Json::array({2})});
  EXPECT_TRUE(YamlRoundTrips(nested));
}

// -----------------------------------------------------------------------------------------------
// EmitYaml: scalars

struct EmitScalarCase {
  Json value;
  std::string yaml;  // without the trailing newline
};

// gtest prints a parameter with this in test names: the YAML it emits, as a JSON string (escaped, one
// line; NaN and infinities, which are all null in JSON, differ there).
void PrintTo(const EmitScalarCase& c, std::ostream* os) {
  *os << Json(c.yaml).dump(-1, ' ', true, Json::error_handler_t::replace);
}

class EmitYamlScalarTest : public ::testing::TestWithParam<EmitScalarCase> {};

TEST_P(EmitYamlScalarTest, WritesScalarAndReadsItBack) {
  EXPECT_EQ(EmitYaml(GetParam().value), GetParam().yaml + "\n");
  EXPECT_TRUE(YamlRoundTrips(GetParam().value));
  EXPECT_TRUE(YamlRoundTrips(Json{{"key", GetParam().value}}));
  EXPECT_TRUE(YamlRoundTrips(Json::array({GetParam().value, 1})));
}

INSTANTIATE_TEST_SUITE_P(Floats, EmitYamlScalarTest,
                         ::testing::Values(EmitScalarCase{500000.0, "500000.0"}, EmitScalarCase{1e-05, "1.0e-05"},
                                           EmitScalarCase{1e30, "1.0e+30"}, EmitScalarCase{1e16, "1.0e+16"},
                                           EmitScalarCase{1.5e300, "1.5e+300"}, EmitScalarCase{-0.0, "-0.0"},
                                           EmitScalarCase{0.1, "0.1"}, EmitScalarCase{-2.5e-08, "-2.5e-08"},
                                           EmitScalarCase{5e-324, "5.0e-324"}));

INSTANTIATE_TEST_SUITE_P(Integers, EmitYamlScalarTest,
                         ::testing::Values(EmitScalarCase{0, "0"}, EmitScalarCase{-1, "-1"},
                                           EmitScalarCase{std::numeric_limits<int64_t>::max(), "9223372036854775807"},
                                           EmitScalarCase{std::numeric_limits<int64_t>::min(),
                                                          "-9223372036854775808"}));

INSTANTIATE_TEST_SUITE_P(
    Strings, EmitYamlScalarTest,
    ::testing::Values(
        EmitScalarCase{"llama", "llama"},
        EmitScalarCase{"model/embed_tokens/embedding", "model/embed_tokens/embedding"},
        EmitScalarCase{"a.b-c_d", "a.b-c_d"}, EmitScalarCase{"_x", "_x"}, EmitScalarCase{"nan", "nan"},
        EmitScalarCase{"inf", "inf"}, EmitScalarCase{"yesno", "yesno"}, EmitScalarCase{"bf16", "bf16"},
        EmitScalarCase{"", "\"\""}, EmitScalarCase{"1", "\"1\""}, EmitScalarCase{"1e5", "\"1e5\""},
        EmitScalarCase{"0x1F", "\"0x1F\""}, EmitScalarCase{".inf", "\".inf\""}, EmitScalarCase{"true", "\"true\""},
        EmitScalarCase{"True", "\"True\""}, EmitScalarCase{"FALSE", "\"FALSE\""}, EmitScalarCase{"null", "\"null\""},
        EmitScalarCase{"Null", "\"Null\""}, EmitScalarCase{"~", "\"~\""}, EmitScalarCase{"yes", "\"yes\""},
        EmitScalarCase{"YES", "\"YES\""}, EmitScalarCase{"No", "\"No\""}, EmitScalarCase{"On", "\"On\""},
        EmitScalarCase{"oFF", "\"oFF\""}, EmitScalarCase{"y", "\"y\""}, EmitScalarCase{"N", "\"N\""},
        EmitScalarCase{"a b", "\"a b\""}, EmitScalarCase{"a: b", "\"a: b\""}, EmitScalarCase{"-x", "\"-x\""},
        EmitScalarCase{"a#b", "\"a#b\""}, EmitScalarCase{"it's", "\"it's\""}, EmitScalarCase{"[x]", "\"[x]\""},
        EmitScalarCase{"x\ny", "\"x\\ny\""}, EmitScalarCase{"tab\t", "\"tab\\t\""},
        EmitScalarCase{"q\"b\\", "\"q\\\"b\\\\\""}, EmitScalarCase{"\x01", "\"\\u0001\""},
        EmitScalarCase{"\x7F", "\"\\u007f\""}, EmitScalarCase{"\xC3\xA9", "\"\xC3\xA9\""},
        EmitScalarCase{"\xC2\x85", "\"\\u0085\""}, EmitScalarCase{"\xC2\xA0", "\"\xC2\xA0\""},
        EmitScalarCase{"a\xE2\x80\xA8"
                       "b",
                       "\"a\\u2028b\""},
        EmitScalarCase{"\xE2\x80\xA9", "\"\\u2029\""}, EmitScalarCase{"\xEF\xBB\xBF", "\"\\ufeff\""},
        EmitScalarCase{" lead", "\" lead\""}, EmitScalarCase{"trail ", "\"trail \""}));

TEST(EmitYamlTest, ReplacesInvalidUtf8) {
  EXPECT_EQ(EmitYaml(Json("a\xFF"
                          "b")),
            "\"a\xEF\xBF\xBD"
            "b\"\n");
}

// -----------------------------------------------------------------------------------------------
// EmitYaml: randomized round trip

/// Builds random values from pieces chosen to trip up quoting and number resolution.
class RandomJson {
 public:
  explicit RandomJson(uint32_t seed) : rng_(seed) {}

  Json Value(int depth) {
    const int kind = Uniform(depth >= 4 ? 6 : 9);
    switch (kind) {
      case 0:
        return nullptr;
      case 1:
        return Uniform(2) == 1;
      case 2:
        return Integer();
      case 3:
        return Float();
      case 4:
      case 5:
        return String();
      case 6:
      case 7: {
        Json object = Json::object();
        const int size = Uniform(5);
        for (int i = 0; i < size; ++i) object[String()] = Value(depth + 1);
        return object;
      }
      default: {
        Json array = Json::array();
        const int size = Uniform(6);
        for (int i = 0; i < size; ++i) array.push_back(Value(depth + 1));
        return array;
      }
    }
  }

 private:
  int Uniform(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }

  Json Integer() {
    static constexpr int64_t kSpecial[] = {0, 1, -1, 7, 10, 4096, INT64_MAX, INT64_MIN};
    if (Uniform(2) == 0) return kSpecial[Uniform(8)];
    return static_cast<int64_t>(rng_());
  }

  Json Float() {
    // Finite only: the emitters refuse NaN and infinities (NonFiniteNumberIsAnInternalErrorNamingItsPointer).
    static constexpr double kSpecial[] = {0.0, -0.0, 0.5, 1.0, 1e-05, 1e30, 1e300, 1e-320, 3.14, 500000.0};
    if (Uniform(3) == 0) return kSpecial[Uniform(10)];
    // Random bit patterns cover subnormals and every exponent; keep the finite ones.
    double value = std::bit_cast<double>(rng_());
    while (!std::isfinite(value)) value = std::bit_cast<double>(rng_());
    return value;
  }

  std::string String() {
    static const char* const kPieces[] = {
        "a",
        "Z",
        "_",
        "x1",
        "1",
        "0",
        "-",
        ".",
        "/",
        " ",
        ":",
        "#",
        "'",
        "\"",
        "\\",
        "\n",
        "\t",
        "\r",
        "[",
        "]",
        "{",
        "}",
        ",",
        "&",
        "*",
        "!",
        "%",
        "@",
        "`",
        "?",
        "|",
        ">",
        "~",
        "e5",
        "0x",
        "true",
        "yes",
        "null",
        "No",
        ".inf",
        ".nan",
        "\xC3\xA9",
        "\x7F",
        "\x01",
        "\xC2\x85",
        "\xE2\x80\xA8",
        "\xEF\xBB\xBF",
        "\xF0\x9F\x98\x80",
        "---",
        "...",
    };
    constexpr int kNumPieces = sizeof(kPieces) / sizeof(kPieces[0]);
    std::string out;
    const int count = Uniform(4);
    for (int i = 0; i < count; ++i) out += kPieces[Uniform(kNumPieces)];
    return out;
  }

  std::mt19937 rng_;
};

TEST(EmitYamlTest, RandomValuesRoundTripThroughParseYamlDocument) {
  RandomJson random(20240611);
  for (int i = 0; i < 3000; ++i) {
    const Json value = random.Value(0);
    ASSERT_TRUE(YamlRoundTrips(value)) << "iteration " << i;
  }
}

TEST(EmitYamlTest, IsDeterministic) {
  RandomJson first(7), second(7);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(EmitYaml(first.Value(0)), EmitYaml(second.Value(0)));
}

}  // namespace
}  // namespace easyplan
