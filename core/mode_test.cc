#include "core/mode.h"

#include <gtest/gtest.h>

namespace easyplan {
namespace {

TEST(Mode, ParsesItsNamesAndEasyDelsConstants) {
  for (Mode mode : {Mode::kTrain, Mode::kPrefill, Mode::kDecode, Mode::kInsert}) {
    EXPECT_EQ(ParseMode(ModeName(mode)), mode);
    EXPECT_EQ(ParseMode(ModeConstant(mode)), mode);
  }
  EXPECT_EQ(ParseMode("__autoregressive__"), Mode::kDecode);
  // The retired serve mode is no mode (api/choices.cc names the two to use instead).
  EXPECT_EQ(ParseMode("serve"), std::nullopt);
}

TEST(Mode, DecodeAndInsertAreEformersGenerationModes) {
  EXPECT_FALSE(IsGenerationMode(Mode::kTrain));
  EXPECT_FALSE(IsGenerationMode(Mode::kPrefill));
  EXPECT_TRUE(IsGenerationMode(Mode::kDecode));
  EXPECT_TRUE(IsGenerationMode(Mode::kInsert));
}

}  // namespace
}  // namespace easyplan
