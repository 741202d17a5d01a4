#include "core/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace easyplan {
namespace {

TEST(JsonForMessageTest, ShowsValuesAsWritten) {
  EXPECT_EQ(JsonForMessage(Json(3)), "3");
  EXPECT_EQ(JsonForMessage(Json(2.5)), "2.5");
  EXPECT_EQ(JsonForMessage(Json("lots")), "\"lots\"");
  EXPECT_EQ(JsonForMessage(Json::parse("[1, 2]")), "[1,2]");
  EXPECT_EQ(JsonForMessage(Json(std::string(100, 'a')), 10), "\"aaaaaa...");
}

// A YAML profile's `.inf` used to be reported as "found null" (nlohmann dumps non-finite floats as
// null): the message named a value the file does not hold.
TEST(JsonForMessageTest, NonFiniteFloatsInYamlSpelling) {
  EXPECT_EQ(JsonForMessage(Json(std::numeric_limits<double>::infinity())), ".inf");
  EXPECT_EQ(JsonForMessage(Json(-std::numeric_limits<double>::infinity())), "-.inf");
  EXPECT_EQ(JsonForMessage(Json(std::nan(""))), ".nan");
  EXPECT_EQ(DescribeFound(Json(std::numeric_limits<double>::infinity())), "float .inf");
}

}  // namespace
}  // namespace easyplan
