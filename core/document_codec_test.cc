#include "core/document_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/yaml_parse.h"

namespace easyplan {
namespace {

// The document after an encode and decode, which must succeed.
Document RoundTrip(const Document& doc) {
  StatusOr<std::string> bytes = EncodeDocument(doc);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  StatusOr<Document> decoded = DecodeDocument(bytes.ok() ? *bytes : "", doc.file());
  EXPECT_TRUE(decoded.ok()) << decoded.status().ToString();
  return decoded.ok() ? *decoded : Document();
}

void ExpectSameDocument(const Document& a, const Document& b) {
  EXPECT_EQ(a.file(), b.file());
  EXPECT_EQ(a.root(), b.root());
  EXPECT_EQ(a.root().dump(), b.root().dump());  // key order and number spelling too
  EXPECT_EQ(a.positions(), b.positions());
  EXPECT_EQ(a.duplicate_keys(), b.duplicate_keys());
}

TEST(DocumentCodecTest, AParsedYamlFileComesBackWithItsPositionsAndDuplicateKeys) {
  const std::string yaml =
      "zeta: 1\n"
      "alpha:\n"
      "  - {name: x, size: -3, ratio: 0.5, big: 9223372036854775807, hex: 0x1F, inf: .inf}\n"
      "  - null\n"
      "  - [true, false, '', \"caf\\u00e9\"]\n"
      "alpha: again\n"
      "nested: {a: {b: {c: [[[]]]}}, e: {}}\n";
  StatusOr<Document> parsed = ParseYamlDocument(yaml, "data.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_FALSE(parsed->duplicate_keys().empty());
  const Document decoded = RoundTrip(*parsed);
  ExpectSameDocument(decoded, *parsed);
  EXPECT_EQ(decoded.Locate("/alpha").line, parsed->Locate("/alpha").line);
}

TEST(DocumentCodecTest, NumberTypesSurvive) {
  Json root = Json::object();
  root["int"] = int64_t{-9223372036854775807 - 1};
  root["unsigned"] = uint64_t{18446744073709551615u};
  root["float"] = -0.0;
  root["tiny"] = 5e-324;
  const Document decoded = RoundTrip(Document("n.json", root));
  EXPECT_TRUE(decoded.root()["int"].is_number_integer() && !decoded.root()["int"].is_number_unsigned());
  EXPECT_EQ(decoded.root()["int"].get<int64_t>(), root["int"].get<int64_t>());
  EXPECT_TRUE(decoded.root()["unsigned"].is_number_unsigned());
  EXPECT_TRUE(decoded.root()["float"].is_number_float());
  EXPECT_TRUE(std::signbit(decoded.root()["float"].get<double>()));
  EXPECT_EQ(decoded.root()["tiny"].get<double>(), 5e-324);
}

TEST(DocumentCodecTest, TruncatedOrAlteredBytesAreAnInternalErrorNeverACrash) {
  StatusOr<Document> parsed = ParseYamlDocument("a: [1, {b: two}]\nc: 3.5\n", "d.yaml");
  ASSERT_TRUE(parsed.ok());
  StatusOr<std::string> bytes = EncodeDocument(*parsed);
  ASSERT_TRUE(bytes.ok());
  for (size_t size = 0; size < bytes->size(); ++size) {
    StatusOr<Document> decoded = DecodeDocument(std::string_view(*bytes).substr(0, size), "d.yaml");
    ASSERT_FALSE(decoded.ok()) << size;
    EXPECT_EQ(decoded.status().kind(), ErrorKind::kInternal);
    EXPECT_NE(decoded.status().ToString().find("embedded document 'd.yaml' is corrupt"), std::string::npos);
  }
  EXPECT_FALSE(DecodeDocument(*bytes + "x", "d.yaml").ok());
  for (size_t i = 0; i < bytes->size(); ++i) {
    std::string altered = *bytes;
    altered[i] = static_cast<char>(altered[i] ^ 0xFF);
    (void)DecodeDocument(altered, "d.yaml");  // any answer but a crash
  }
}

TEST(DocumentCodecTest, BinaryValuesHaveNoEncoding) {
  Json root = Json::binary({1, 2, 3});
  StatusOr<std::string> bytes = EncodeDocument(Document("b.json", root));
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().kind(), ErrorKind::kInternal);
}

}  // namespace
}  // namespace easyplan
