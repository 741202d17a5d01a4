#include "core/script_json.h"

#include <gtest/gtest.h>

#include <string>

#include "core/json.h"

namespace easyplan {
namespace {

// Every state of the HTML tokenizer's script data that a tensor name could reach.
const char* const kHostileNames[] = {
    "z/<!--<script>/w",       // escaped, then double-escaped state: "</script>" no longer ends the element
    "z/</script><b>x</b>/w",  // ends the element outright
    "z/</SCRIPT >/w",         // the end tag is case-insensitive
    "z/<!-- -->/w",           // a comment opener and closer
    "a&amp;b&lt;c",           // character references, which script data does not decode but an attribute would
    "line\xE2\x80\xA8sep\xE2\x80\xA9para",  // U+2028, U+2029
};

TEST(JsonForScriptElementTest, NoMarkupCharacterIsLeftRaw) {
  for (const char* name : kHostileNames) {
    const std::string safe = JsonForScriptElement(Json({{"name", name}}).dump());
    EXPECT_EQ(safe.find('<'), std::string::npos) << safe;
    EXPECT_EQ(safe.find('>'), std::string::npos) << safe;
    EXPECT_EQ(safe.find('&'), std::string::npos) << safe;
    EXPECT_EQ(safe.find("\xE2\x80\xA8"), std::string::npos) << safe;
    EXPECT_EQ(safe.find("\xE2\x80\xA9"), std::string::npos) << safe;
  }
  EXPECT_EQ(JsonForScriptElement(R"({"n":"z/<!--<script>/w"})"), R"({"n":"z/\u003c!--\u003cscript\u003e/w"})");
  EXPECT_EQ(JsonForScriptElement(R"(["a&b"])"), R"(["a\u0026b"])");
  EXPECT_EQ(JsonForScriptElement("[\"\xE2\x80\xA8\xE2\x80\xA9\xE2\x80\xA7\"]"),
            "[\"\\u2028\\u2029\xE2\x80\xA7\"]");  // U+2027 is an ordinary character
}

TEST(JsonForScriptElementTest, ParsesBackToTheSameData) {
  for (const char* name : kHostileNames) {
    const Json data = {{"tensors", {{{"name", name}, {"shape", {4, 8}}}}}, {"mesh", "dp=2"}};
    EXPECT_EQ(Json::parse(JsonForScriptElement(data.dump())), data) << name;
  }
}

}  // namespace
}  // namespace easyplan
