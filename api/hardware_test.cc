// --hardware NAME|FILE (api/hardware.h, Model::Hardware): built-in names, profile files, and the
// messages of a name easyplan does not know.
#include "api/hardware.h"

#include <gtest/gtest.h>

#include "api/model.h"
#include "tests/test_util.h"

namespace easyplan::api {
namespace {

TEST(HardwareLookupTest, NamesAreTheStemsOfTheBuiltInProfiles) {
  const std::vector<std::string> names = HardwareNames(Environment::Real());
  EXPECT_EQ(names, (std::vector<std::string>{"a100-80g", "b200", "gb200-nvl72", "h100-sxm", "h200", "mi300x", "tpu-v4",
                                             "tpu-v5e", "tpu-v5p", "tpu-v6e"}));
}

TEST(HardwareLookupTest, APathOrAYamlSuffixMeansAFile) {
  EXPECT_FALSE(IsHardwareFile("tpu-v5p"));
  EXPECT_TRUE(IsHardwareFile("./tpu-v5p"));
  EXPECT_TRUE(IsHardwareFile("gpu.yaml"));
  EXPECT_TRUE(IsHardwareFile("gpu.yml"));
}

TEST(HardwareLookupTest, ABuiltInNameLoadsItsProfile) {
  StatusOr<step::HardwareProfile> profile = LoadHardwareProfile(Environment::Real(), "tpu-v5p");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->name, "tpu-v5p");
  EXPECT_EQ(profile->source, "schemas/hardware/tpu-v5p.yaml");
  EXPECT_EQ(profile->hbm_bytes, int64_t{95} << 30);
  EXPECT_EQ(profile->fast.torus, (std::vector<int64_t>{16, 16, 24}));
}

TEST(HardwareLookupTest, AFileIsNamedByItsStemAndErrorsNameTheFile) {
  const std::string dir = testing::SourceDir() + "/tests/fixtures/hardware/";
  StatusOr<step::HardwareProfile> profile = LoadHardwareProfile(Environment::Real(), dir + "custom-gpu.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->name, "custom-gpu");
  EXPECT_EQ(profile->hbm_bytes, int64_t{24} << 30);
  StatusOr<step::HardwareProfile> bad = LoadHardwareProfile(Environment::Real(), dir + "bad-efficiency.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("bad-efficiency.yaml:10:"), std::string::npos) << bad.status().ToString();
  EXPECT_FALSE(LoadHardwareProfile(Environment::Real(), dir + "missing.yaml").ok());
}

// issue 36: a key given twice in a profile silently took the last value.
TEST(HardwareLookupTest, DuplicateKeyIsAWarningNamingBothLinesAndAnErrorUnderStrict) {
  const std::string file = testing::SourceDir() + "/tests/fixtures/hardware/duplicate-key.yaml";
  std::vector<Diag> duplicates;
  StatusOr<step::HardwareProfile> profile = LoadHardwareProfile(Environment::Real(), file, &duplicates);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_DOUBLE_EQ(profile->peak_flops_bf16, 100e12);  // the last value, as for a config
  ASSERT_EQ(duplicates.size(), 1u);
  EXPECT_EQ(duplicates[0].ToString(), file + ":10:18: warning: /peak_flops_bf16: key given more than once, at " + file +
                                          ":6:18 and " + file + ":10:18; the last value is used");

  std::vector<Diag> warned;
  Environment env = Environment::Real();
  env.warn = [&warned](const Diag& warning) { warned.push_back(warning); };
  auto model = Model::Load(env, ConfigSource::None(), {});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_TRUE((*model)->Hardware(file).ok());
  ASSERT_TRUE((*model)->Hardware(file).ok());
  EXPECT_EQ(warned.size(), 1u);  // once per file

  ConfigOptions strict;
  strict.strict = true;
  auto strict_model = Model::Load(env, ConfigSource::None(), strict);
  ASSERT_TRUE(strict_model.ok()) << strict_model.status().ToString();
  StatusOr<const step::HardwareProfile*> refused = (*strict_model)->Hardware(file);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().diag().severity, Severity::kError);
  EXPECT_NE(refused.status().ToString().find(":6:18 and "), std::string::npos) << refused.status().ToString();
}

TEST(HardwareLookupTest, UnknownNameSuggestsAVariantAndListsEveryName) {
  StatusOr<step::HardwareProfile> profile = LoadHardwareProfile(Environment::Real(), "h100");
  ASSERT_FALSE(profile.ok());
  const Status status = profile.status();
  const Diag& diag = status.diag();
  EXPECT_NE(diag.message.find("(did you mean 'h100-sxm'?)"), std::string::npos) << diag.message;
  ASSERT_FALSE(diag.notes.empty());
  EXPECT_NE(diag.notes[0].find("\"tpu-v6e\""), std::string::npos) << diag.notes[0];
  ASSERT_GE(diag.notes.size(), 2u);
  EXPECT_NE(diag.notes[1].find("\"h100-80g\""), std::string::npos) << diag.notes[1];
  EXPECT_NE(LoadHardwareProfile(Environment::Real(), "tpu-v5q").status().diag().message.find("did you mean"),
            std::string::npos);
}

// A memory-only accelerator of the catalogue (a part and its memory) points at its part's profile, not at the
// nearest spelling: h100-80g once suggested a100-80g, another GPU.
TEST(HardwareLookupTest, ADeviceNameSuggestsTheProfileOfItsPart) {
  for (const auto& [device, profile] : {std::pair{"h100-80g", "h100-sxm"}, std::pair{"b200-192g", "b200"},
                                        std::pair{"tpu-v5p-95g", "tpu-v5p"}, std::pair{"h200-141g", "h200"}}) {
    const std::string message = LoadHardwareProfile(Environment::Real(), device).status().diag().message;
    EXPECT_NE(message.find(std::string("(did you mean '") + profile + "'?)"), std::string::npos) << message;
  }
}

// One catalogue: a memory-only entry says it cannot price a step and names the profiles of its part;
// an ambiguous name (h100-80g covers SXM and PCIe) says which part its profile is; a part with no
// bundled profile says so.
TEST(HardwareLookupTest, AMemoryOnlyEntrySaysItCannotPriceAStep) {
  const Diag h100 = LoadHardwareProfile(Environment::Real(), "h100-80g").status().diag();
  EXPECT_NE(h100.message.find("has memory figures only: it budgets memory but cannot price a step"), std::string::npos)
      << h100.message;
  ASSERT_EQ(h100.notes.size(), 1u);
  EXPECT_EQ(h100.notes[0],
            "the profile of its part: \"h100-sxm\" (h100-sxm is the SXM part; no PCIe profile is bundled)");
  const Diag l4 = LoadHardwareProfile(Environment::Real(), "l4-24g").status().diag();
  EXPECT_EQ(l4.message.find("did you mean"), std::string::npos) << l4.message;
  ASSERT_EQ(l4.notes.size(), 1u);
  EXPECT_NE(l4.notes[0].find("no profile of this part is bundled"), std::string::npos) << l4.notes[0];
}

TEST(HardwareLookupTest, TheModelKeepsEachProfileAfterFirstUse) {
  auto model = Model::Load(Environment::Real(), ConfigSource::None(), {});
  ASSERT_TRUE(model.ok());
  StatusOr<const step::HardwareProfile*> first = (*model)->Hardware("h100-sxm");
  StatusOr<const step::HardwareProfile*> again = (*model)->Hardware("h100-sxm");
  ASSERT_TRUE(first.ok() && again.ok()) << first.status().ToString();
  EXPECT_EQ(*first, *again);
  EXPECT_EQ((*first)->fast.kind, "nvlink");
  EXPECT_FALSE((*model)->Hardware("h101-sxm").ok());
}

}  // namespace
}  // namespace easyplan::api
