// What suggest computes once and reuses (SearchTuning) changes no figure: the search with its reuse on
// ranks the same candidates with the same figures, rejects the same counts for the same reasons, as the
// search that prices every placement from scratch.

#include <gtest/gtest.h>

#include "api/suggest.h"
#include "api/test_models.h"
#include "tests/test_util.h"

namespace easyplan::api {
namespace {

SuggestOptions Sliced(int64_t devices, int64_t slices, int64_t max_pp) {
  SuggestOptions options;
  options.plan.config.devices = devices;
  options.plan.config.sets = {"attn_mechanism=flash_attn2"};
  options.memory.mode = "train";
  options.memory.batch = 32;
  options.memory.seq = 4096;
  options.memory.hardware = "h100-sxm";
  options.slices = slices;
  options.max_pp = max_pp;
  return options;
}

// Every candidate (not only the top ones) with every figure suggest shows, and the search's counts.
Json Everything(const SuggestOptions& options, const SuggestResult& result) {
  SuggestOptions all = options;
  all.top = static_cast<int64_t>(result.ranked.size());
  Json out = SuggestToJson(all, result);
  Json orders = Json::array();
  for (const Candidate& c : result.ranked) orders.push_back(c.order);
  out["orders"] = std::move(orders);
  return out;
}

void ExpectSameSearch(const SuggestOptions& options) {
  auto model = LoadExample("llama-3.1-8b", {.sets = {"attn_mechanism=flash_attn2"}});
  auto reused = Suggest(model, options);
  auto scratch = Suggest(model, options, {.share = false});
  ASSERT_TRUE(reused.ok()) << reused.status().ToString();
  ASSERT_TRUE(scratch.ok()) << scratch.status().ToString();
  ASSERT_FALSE(reused->ranked.empty());
  EXPECT_EQ(reused->considered, scratch->considered);
  EXPECT_EQ(reused->rejected, scratch->rejected);
  ASSERT_EQ(reused->ranked.size(), scratch->ranked.size());
  // Compared exactly (doubles too), candidate by candidate so that a difference names its rank.
  const Json a = Everything(options, *reused), b = Everything(options, *scratch);
  for (size_t i = 0; i < a["candidates"].size(); ++i) {
    EXPECT_EQ(a["candidates"][i], b["candidates"][i]) << "#" << i + 1 << ": " << a["candidates"][i].dump();
  }
  EXPECT_EQ(a, b);
}

TEST(SuggestReuse, PipelinesOnTwoSlicesRankTheSameAsPricedFromScratch) { ExpectSameSearch(Sliced(16, 2, 16)); }

TEST(SuggestReuse, FlatMeshesOnFourSlicesRankTheSameAsPricedFromScratch) { ExpectSameSearch(Sliced(32, 4, 1)); }

}  // namespace
}  // namespace easyplan::api
