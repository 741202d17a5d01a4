#include "core/byte_size.h"

#include <gtest/gtest.h>

namespace easyplan {
namespace {

int64_t Parse(std::string_view text) {
  auto bytes = ParseByteSize(text, "--max-memory");
  EXPECT_TRUE(bytes.ok()) << text << ": " << bytes.status().ToString();
  return bytes.ok() ? *bytes : -1;
}

TEST(ParseByteSizeTest, AcceptsDecimalAndBinaryUnits) {
  EXPECT_EQ(Parse("17179869184"), 17179869184);
  EXPECT_EQ(Parse("80GiB"), 85899345920);
  EXPECT_EQ(Parse("80 GiB"), 85899345920);
  EXPECT_EQ(Parse("95gb"), 95000000000);
  EXPECT_EQ(Parse("1.5TiB"), 1649267441664);
  EXPECT_EQ(Parse("0.5KB"), 500);
  EXPECT_EQ(Parse("512B"), 512);
  EXPECT_EQ(Parse("1.0000001KiB"), 1024);  // rounded down to whole bytes
}

TEST(ParseByteSizeTest, RejectsAmbiguousUnknownAndOverflowingSizes) {
  for (std::string_view bad : {"", "GiB", "80G", "80 gigs", "-1GB", "1e9", "9999999PiB", "99999999999999999999"}) {
    auto bytes = ParseByteSize(bad, "--max-memory");
    ASSERT_FALSE(bytes.ok()) << bad;
    EXPECT_NE(bytes.status().diag().message.find("--max-memory"), std::string::npos);
  }
  auto ambiguous = ParseByteSize("80G", "--max-memory");
  EXPECT_NE(ambiguous.status().diag().message.find("ambiguous"), std::string::npos);
}

}  // namespace
}  // namespace easyplan
