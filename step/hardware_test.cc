// Hardware profiles (schemas/hardware/NAME.yaml, docs/COST.md#hardware-profiles): every embedded
// profile parses and agrees with its memory-only entries, a wrong field is named at its line, and the
// validation runs (docs/cost_validation.yaml) are consistent with the profiles.
#include "step/hardware.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/yaml_parse.h"
#include "schemas/data_source.h"
#include "step/hardware_ranges.h"
#include "tests/test_util.h"

namespace easyplan::step {
namespace {

constexpr const char* kProfile = R"(description: "Test chip"
hbm_bytes: 16GiB
hbm_bandwidth: 819e9
peak_flops_bf16: 197e12
chips_per_host: 8
fast: {kind: ici, chips: 256, torus: [16, 16], wraparound: full_dims, bandwidth: 9e10, latency: 1e-6}
network: {kind: dcn, chips: 0, bandwidth: 3.125e9, latency: 14e-6}
efficiency: {matmul: 0.99, link: 0.82, hbm: 0.94}
)";

StatusOr<HardwareProfile> ParseProfile(const std::string& text) {
  EP_ASSIGN_OR_RETURN(Document doc, ParseYamlDocument(text, "chip.yaml"));
  return ParseHardwareProfile(doc, "chip");
}

/// kProfile with the line that starts with `prefix` replaced by `line`.
std::string With(const std::string& prefix, const std::string& line) {
  std::string text = kProfile;
  const size_t at = text.find("\n" + prefix);
  EXPECT_NE(at, std::string::npos) << prefix;
  const size_t end = text.find('\n', at + 1);
  return text.substr(0, at + 1) + line + text.substr(end);
}

std::string ErrorOf(const std::string& text) {
  StatusOr<HardwareProfile> profile = ParseProfile(text);
  EXPECT_FALSE(profile.ok());
  return profile.ok() ? std::string() : profile.status().ToString();
}

std::string Stem(const std::string& path) {
  const std::string file = path.substr(path.rfind('/') + 1);
  return file.substr(0, file.rfind('.'));
}

TEST(HardwareProfileTest, ReadsEveryFieldInSiUnits) {
  StatusOr<HardwareProfile> profile = ParseProfile(kProfile);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->name, "chip");
  EXPECT_EQ(profile->source, "chip.yaml");
  EXPECT_EQ(profile->description, "Test chip");
  EXPECT_EQ(profile->hbm_bytes, int64_t{16} << 30);
  EXPECT_DOUBLE_EQ(profile->hbm_bandwidth, 819e9);
  EXPECT_DOUBLE_EQ(profile->peak_flops_bf16, 197e12);
  EXPECT_FALSE(profile->peak_flops_fp8.has_value());
  EXPECT_EQ(profile->chips_per_host, 8);
  EXPECT_EQ(profile->fast.kind, "ici");
  EXPECT_EQ(profile->fast.chips, 256);
  EXPECT_EQ(profile->fast.torus, (std::vector<int64_t>{16, 16}));
  EXPECT_DOUBLE_EQ(profile->fast.bandwidth, 9e10);
  EXPECT_DOUBLE_EQ(profile->fast.latency, 1e-6);
  EXPECT_EQ(profile->network.kind, "dcn");
  EXPECT_EQ(profile->network.chips, 0);
  EXPECT_TRUE(profile->network.torus.empty());
  EXPECT_DOUBLE_EQ(profile->network.bandwidth, 3.125e9);
  EXPECT_DOUBLE_EQ(profile->matmul_efficiency, 0.99);
  EXPECT_DOUBLE_EQ(profile->link_efficiency, 0.82);
  EXPECT_DOUBLE_EQ(profile->hbm_efficiency, 0.94);
}

TEST(HardwareProfileTest, Fp8PeakAndIntegerByteCountsAreAccepted) {
  StatusOr<HardwareProfile> profile =
      ParseProfile(With("hbm_bytes", "hbm_bytes: 17179869184\npeak_flops_fp8: 1979e12"));
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->hbm_bytes, int64_t{16} << 30);
  ASSERT_TRUE(profile->peak_flops_fp8.has_value());
  EXPECT_DOUBLE_EQ(*profile->peak_flops_fp8, 1979e12);
}

TEST(HardwareProfileTest, UnknownKeyIsNamedAtItsLineWithDidYouMean) {
  const std::string error = ErrorOf(With("hbm_bandwidth", "hbm_bandwith: 819e9"));
  EXPECT_NE(error.find("chip.yaml:3:"), std::string::npos) << error;
  EXPECT_NE(error.find("unknown key 'hbm_bandwith' (did you mean 'hbm_bandwidth'?)"), std::string::npos) << error;
}

TEST(HardwareProfileTest, UnknownNestedKeyNamesItsPath) {
  const std::string error = ErrorOf(With("efficiency", "efficiency: {matmul: 0.9, link: 0.8, hmb: 0.9}"));
  EXPECT_NE(error.find("/efficiency/hmb: unknown key 'hmb' (did you mean 'hbm'?)"), std::string::npos) << error;
}

TEST(HardwareProfileTest, NegativeBandwidthIsRejectedWithWhatWasExpected) {
  const std::string error = ErrorOf(
      With("fast",
           "fast: {kind: ici, chips: 256, torus: [16, 16], wraparound: full_dims, bandwidth: -9e10, latency: 1e-6}"));
  EXPECT_NE(error.find("chip.yaml:6:"), std::string::npos) << error;
  EXPECT_NE(error.find("/fast/bandwidth: expected a positive number of bytes per second, found -9"), std::string::npos)
      << error;
}

TEST(HardwareProfileTest, InfiniteBandwidthIsRejected) {  // the cost model divides by it
  const std::string error = ErrorOf(With(
      "fast", "fast: {kind: ici, chips: 256, torus: [16, 16], wraparound: full_dims, bandwidth: .inf, latency: 1e-6}"));
  EXPECT_NE(error.find("/fast/bandwidth: expected a finite number of bytes per second, found .inf"), std::string::npos)
      << error;
}

// The message names the value the file holds: `.nan` and `-.inf` used to be reported as "found null".
TEST(HardwareProfileTest, NonFiniteFiguresAreNamedAsWritten) {
  EXPECT_NE(ErrorOf(With("peak_flops_bf16", "peak_flops_bf16: .nan"))
                .find("/peak_flops_bf16: expected a finite number of FLOP per second, found .nan"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("efficiency", "efficiency: {matmul: -.inf, link: 0.8, hbm: 0.9}"))
                .find("/efficiency/matmul: expected a finite number in (0, 1], found -.inf"),
            std::string::npos);
}

// issue 36: a profile with peak_flops_bf16: 1e-300 priced a step at `step time inf s`.
TEST(HardwareProfileTest, PeakBelowOneTeraflopIsRejectedWithTheRange) {
  const std::string error = ErrorOf(With("peak_flops_bf16", "peak_flops_bf16: 1e-300"));
  EXPECT_NE(error.find("chip.yaml:4:"), std::string::npos) << error;
  EXPECT_NE(error.find("/peak_flops_bf16: expected at least 1e12 FLOP per second (1 TFLOP/s), found 1e-300"),
            std::string::npos)
      << error;
  EXPECT_NE(ErrorOf(With("hbm_bytes", "hbm_bytes: 16GiB\npeak_flops_fp8: 9.9e11"))
                .find("/peak_flops_fp8: expected at least 1e12 FLOP per second (1 TFLOP/s), found 990000000000.0"),
            std::string::npos);
  StatusOr<HardwareProfile> one_teraflop = ParseProfile(With("peak_flops_bf16", "peak_flops_bf16: 1e12"));
  EXPECT_TRUE(one_teraflop.ok()) << one_teraflop.status().ToString();
}

TEST(HardwareProfileTest, BandwidthBelowOneGigabytePerSecondIsRejectedWithTheRange) {
  const std::string range = "expected at least 1e9 bytes per second (1 GB/s), found 1e-300";
  EXPECT_NE(ErrorOf(With("hbm_bandwidth", "hbm_bandwidth: 1e-300"))
                .find("/hbm_bandwidth: expected at least 2e10 bytes per second (20 GB/s), found 1e-300"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("fast",
                         "fast: {kind: ici, chips: 256, torus: [16, 16], wraparound: full_dims, bandwidth: 1e-300, "
                         "latency: 1e-6}"))
                .find("chip.yaml:6:"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("network", "network: {kind: dcn, chips: 0, bandwidth: 1e-300, latency: 14e-6}"))
                .find("/network/bandwidth: " + range),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("network",
                         "network: {kind: dcn, chips: 0, bandwidth: 9e10, latency: 14e-6, low_latency: "
                         "{base_latency: 6.6e-6, latency: 0.6e-6, bandwidth: 1e-300}}"))
                .find("/network/low_latency/bandwidth: " + range),
            std::string::npos);
  StatusOr<HardwareProfile> one_gigabyte =
      ParseProfile(With("network", "network: {kind: dcn, chips: 0, bandwidth: 1e9, latency: 14e-6}"));
  EXPECT_TRUE(one_gigabyte.ok()) << one_gigabyte.status().ToString();
}

// issue 36: a 1e-300 efficiency or a 1e307 s latency priced a step at infinity (an internal error now);
// issue 44: the ranges are those of parts that exist (step/hardware_ranges.h).
TEST(HardwareProfileTest, EfficiencyBelowThreePercentAndLatencyAbove200MicrosecondsAreRejected) {
  EXPECT_NE(ErrorOf(With("efficiency", "efficiency: {matmul: 1e-300, link: 0.8, hbm: 0.9}"))
                .find("/efficiency/matmul: expected a fraction of at least 0.03 (3%), found 1e-300"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("network", "network: {kind: dcn, chips: 0, bandwidth: 3.125e9, latency: 1e307}"))
                .find("/network/latency: expected at most 2e-4 seconds (200 us), found 1e+307"),
            std::string::npos);
  StatusOr<HardwareProfile> edges = ParseProfile(With("efficiency", "efficiency: {matmul: 0.03, link: 1, hbm: 0.5}"));
  EXPECT_TRUE(edges.ok()) << edges.status().ToString();
}

TEST(HardwareProfileTest, EfficiencyMustBeAFractionUpToOne) {
  EXPECT_NE(ErrorOf(With("efficiency", "efficiency: {matmul: 1.2, link: 0.8, hbm: 0.9}"))
                .find("/efficiency/matmul: expected a fraction in (0, 1], found 1.2"),
            std::string::npos);
  EXPECT_NE(ErrorOf(With("efficiency", "efficiency: {matmul: 0.9, link: 0, hbm: 0.9}"))
                .find("/efficiency/link: expected a fraction in (0, 1], found 0"),
            std::string::npos);
  StatusOr<HardwareProfile> one = ParseProfile(With("efficiency", "efficiency: {matmul: 1, link: 1, hbm: 1}"));
  EXPECT_TRUE(one.ok()) << one.status().ToString();
}

TEST(HardwareProfileTest, TorusDimsMustBePositiveAndMatchTheChips) {
  EXPECT_NE(
      ErrorOf(
          With("fast",
               "fast: {kind: ici, chips: 256, torus: [16, 0], wraparound: full_dims, bandwidth: 9e10, latency: 1e-6}"))
          .find("/fast/torus/1: expected an integer torus dim of at least 1, found 0"),
      std::string::npos);
  EXPECT_NE(
      ErrorOf(
          With("fast",
               "fast: {kind: ici, chips: 200, torus: [16, 16], wraparound: full_dims, bandwidth: 9e10, latency: 1e-6}"))
          .find("the torus dims multiply to 256, but 'chips' is 200"),
      std::string::npos);
}

TEST(HardwareProfileTest, NetworkBandwidthIsTheHostsNicsSharedByItsChips) {
  // 2 NICs of 12.5e9 B/s for the host's 8 chips: 3.125e9 per chip, as the bandwidth convention states.
  StatusOr<HardwareProfile> profile =
      ParseProfile(With("network", "network: {kind: dcn, nics_per_host: 2, nic_bandwidth: 12.5e9, latency: 14e-6}"));
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->network.nics_per_host, 2);
  EXPECT_DOUBLE_EQ(profile->network.nic_bandwidth, 12.5e9);
  EXPECT_DOUBLE_EQ(profile->network.bandwidth, 3.125e9);
}

TEST(HardwareProfileTest, NicsAndAPerChipBandwidthTogetherAreRejectedSoNothingCountsTwice) {
  const std::string both = ErrorOf(
      With("network", "network: {kind: dcn, bandwidth: 3e9, nics_per_host: 2, nic_bandwidth: 12.5e9, latency: 1e-5}"));
  EXPECT_NE(both.find("chip.yaml"), std::string::npos) << both;
  EXPECT_NE(both.find("/network/bandwidth: expected either 'bandwidth' (per chip) or 'nics_per_host' with "
                      "'nic_bandwidth', found both"),
            std::string::npos)
      << both;
  const std::string half = ErrorOf(With("network", "network: {kind: dcn, nics_per_host: 2, latency: 1e-5}"));
  EXPECT_NE(half.find("missing key 'nic_bandwidth'"), std::string::npos) << half;
  const std::string zero =
      ErrorOf(With("network", "network: {kind: dcn, nics_per_host: 0, nic_bandwidth: 12.5e9, latency: 1e-5}"));
  EXPECT_NE(zero.find("/network/nics_per_host: expected an integer count of NICs of at least 1, found 0"),
            std::string::npos)
      << zero;
  // NICs belong to the network, a torus to the fast domain.
  const std::string misplaced =
      ErrorOf(With("fast", "fast: {kind: nvlink, chips: 8, nics_per_host: 8, bandwidth: 9e10, latency: 1e-6}"));
  EXPECT_NE(misplaced.find("/fast/nics_per_host: unknown key 'nics_per_host'"), std::string::npos) << misplaced;
}

TEST(HardwareProfileTest, ATorusNamesItsWraparoundRule) {
  const std::string missing =
      ErrorOf(With("fast", "fast: {kind: ici, chips: 256, torus: [16, 16], bandwidth: 9e10, latency: 1e-6}"));
  EXPECT_NE(missing.find("/fast: missing key 'wraparound': expected which dims of a slice of the torus wrap around, "
                         "one of \"full_cubes\", \"full_dims\""),
            std::string::npos)
      << missing;
  const std::string typo = ErrorOf(With(
      "fast", "fast: {kind: ici, chips: 256, torus: [16, 16], wraparound: full_dim, bandwidth: 9e10, latency: 1e-6}"));
  EXPECT_NE(typo.find("/fast/wraparound: unknown wraparound rule 'full_dim' (did you mean 'full_dims'?)"),
            std::string::npos)
      << typo;
  const std::string alone =
      ErrorOf(With("fast", "fast: {kind: nvlink, chips: 8, wraparound: full_dims, bandwidth: 9e10, latency: 1e-6}"));
  EXPECT_NE(alone.find("/fast/wraparound: expected 'wraparound' only beside a 'torus'"), std::string::npos) << alone;
}

TEST(HardwareProfileTest, NetworkEfficiencyIsItsOwnFraction) {
  StatusOr<HardwareProfile> profile =
      ParseProfile(With("efficiency", "efficiency: {matmul: 0.99, link: 0.82, hbm: 0.94, network: 0.7}"));
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->network_efficiency, 0.7);
  EXPECT_NE(ErrorOf(With("efficiency", "efficiency: {matmul: 0.99, link: 0.82, hbm: 0.94, network: 1.5}"))
                .find("/efficiency/network: expected a fraction in (0, 1], found 1.5"),
            std::string::npos);
}

TEST(HardwareProfileTest, ChipsMayNotBeNegative) {
  EXPECT_NE(ErrorOf(With("network", "network: {kind: dcn, chips: -1, bandwidth: 3e9, latency: 1e-5}"))
                .find("/network/chips: expected an integer count of chips of at least 0, found -1"),
            std::string::npos);
}

TEST(HardwareProfileTest, LinkKindIsAClosedVocabularyWithDidYouMean) {
  const std::string error = ErrorOf(With("network", "network: {kind: infiniband2, bandwidth: 5e10, latency: 1e-5}"));
  EXPECT_NE(error.find("unknown link kind 'infiniband2' (did you mean 'infiniband'?)"), std::string::npos) << error;
  // An ICI fast domain is not a network kind.
  EXPECT_FALSE(ParseProfile(With("network", "network: {kind: ici, bandwidth: 5e10, latency: 1e-5}")).ok());
}

TEST(HardwareProfileTest, MissingFieldIsNamedWithWhatItHolds) {
  const std::string error = ErrorOf(With("hbm_bytes", "# no hbm_bytes"));
  EXPECT_NE(error.find("missing key 'hbm_bytes'"), std::string::npos) << error;
  EXPECT_NE(ErrorOf(With("hbm_bytes", "hbm_bytes: 16G")).find("expected a byte size"), std::string::npos);
}

TEST(HardwareProfileTest, MatmulTilingReadsTilesUnitsAndTheMeasuredShape) {
  StatusOr<HardwareProfile> profile =
      ParseProfile(With("efficiency:",
                        "efficiency: {matmul: 0.8, link: 0.82, hbm: 0.94, matmul_tiling: {tiles: [[128, 256, 1], "
                        "[64, 64, 1]], units: 132, measured_at: [2048, 2048, 13312]}}"));
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  ASSERT_TRUE(profile->matmul_tiling.has_value());
  EXPECT_EQ(profile->matmul_tiling->tiles.size(), 2u);
  EXPECT_EQ(profile->matmul_tiling->tiles[0][1], 256);
  EXPECT_EQ(profile->matmul_tiling->units, 132);
  EXPECT_EQ(profile->matmul_tiling->measured_at[2], 13312);
  EXPECT_FALSE(ParseProfile(kProfile)->matmul_tiling.has_value());
}

TEST(HardwareProfileTest, AMatmulTileIsThreePositiveDims) {
  const std::string two =
      ErrorOf(With("efficiency:",
                   "efficiency: {matmul: 0.8, link: 0.82, hbm: 0.94, matmul_tiling: {tiles: [[128, 256]], "
                   "measured_at: [1, 1, 1]}}"));
  EXPECT_NE(two.find("/efficiency/matmul_tiling/tiles/0: expected a tile as [m, n, k]"), std::string::npos) << two;
  const std::string zero =
      ErrorOf(With("efficiency:",
                   "efficiency: {matmul: 0.8, link: 0.82, hbm: 0.94, matmul_tiling: {tiles: [[0, 1, 1]], "
                   "measured_at: [1, 1, 1]}}"));
  EXPECT_NE(zero.find("at least 1"), std::string::npos) << zero;
  const std::string missing = ErrorOf(
      With("efficiency:", "efficiency: {matmul: 0.8, link: 0.82, hbm: 0.94, matmul_tiling: {tiles: [[8, 128, 128]]}}"));
  EXPECT_NE(missing.find("missing key 'measured_at'"), std::string::npos) << missing;
}

// Every catalogue entry parses: the full profiles with their links, the memory-only accelerators with their
// memory and their part's profiles.
TEST(HardwareProfileTest, EveryEmbeddedCatalogueEntryParses) {
  const schemas::DataSource data = schemas::DataSource::Embedded();
  std::vector<std::string> names, memory_only;
  for (const std::string& file : data.List("schemas/hardware")) {
    StatusOr<Document> doc = data.ReadDocument(file);
    ASSERT_TRUE(doc.ok()) << doc.status().ToString();
    StatusOr<HardwareProfile> profile = ParseHardwareProfile(*doc, Stem(file));
    ASSERT_TRUE(profile.ok()) << profile.status().ToString();
    EXPECT_FALSE(profile->description.empty()) << file;
    EXPECT_GT(profile->hbm_bytes, 0) << file;
    if (profile->memory_only) {
      EXPECT_EQ(profile->peak_flops_bf16, 0) << file;
      memory_only.push_back(profile->name);
    } else {
      EXPECT_GT(profile->fast.chips, 1) << file;
      names.push_back(profile->name);
    }
  }
  for (const char* expected :
       {"tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "h100-sxm", "h200", "a100-80g", "b200", "gb200-nvl72", "mi300x"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
  for (const char* expected : {"h100-80g", "a100-40g", "l4-24g", "tpu-v5p-95g"}) {
    EXPECT_NE(std::find(memory_only.begin(), memory_only.end(), expected), memory_only.end()) << expected;
  }
}

TEST(HardwareProfileTest, AMemoryOnlyEntryTakesItsOwnKeysOnly) {
  const auto parse = [](const std::string& text) -> StatusOr<HardwareProfile> {
    EP_ASSIGN_OR_RETURN(Document doc, ParseYamlDocument(text, "gpu.yaml"));
    return ParseHardwareProfile(doc, "gpu");
  };
  StatusOr<HardwareProfile> ok =
      parse("memory_only: true\ndescription: A GPU\nhbm_bytes: 24GiB\nprofiles: [h100-sxm]\nnote: why\n");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_TRUE(ok->memory_only);
  EXPECT_EQ(ok->hbm_bytes, int64_t{24} << 30);
  EXPECT_EQ(ok->profiles, std::vector<std::string>{"h100-sxm"});
  const Status priced =
      parse("memory_only: true\ndescription: A GPU\nhbm_bytes: 24GiB\nhbm_bandwidth: 1e12\n").status();
  EXPECT_NE(priced.ToString().find("hbm_bandwidth"), std::string::npos) << priced.ToString();
  EXPECT_FALSE(parse("memory_only: true\nhbm_bytes: 24GiB\n").ok());  // no description
  EXPECT_FALSE(parse("memory_only: yes please\ndescription: A\nhbm_bytes: 1GiB\n").ok());
}

// One catalogue: a memory-only entry and the full profiles of its part agree on the memory a process can
// use (B200: 180 GiB in both), and every full profile is a memory-only entry's part or its own entry.
TEST(HardwareProfileTest, MemoryOnlyEntriesAndTheProfilesOfTheirPartAgreeOnMemory) {
  const schemas::DataSource data = schemas::DataSource::Embedded();
  std::map<std::string, HardwareProfile> catalogue;
  for (const std::string& file : data.List("schemas/hardware")) {
    StatusOr<Document> doc = data.ReadDocument(file);
    ASSERT_TRUE(doc.ok());
    StatusOr<HardwareProfile> entry = ParseHardwareProfile(*doc, Stem(file));
    ASSERT_TRUE(entry.ok()) << entry.status().ToString();
    catalogue.emplace(entry->name, *entry);
  }
  std::set<std::string> listed;
  for (const auto& [name, entry] : catalogue) {
    if (!entry.memory_only) continue;
    for (const std::string& profile_name : entry.profiles) {
      listed.insert(profile_name);
      auto profile = catalogue.find(profile_name);
      ASSERT_NE(profile, catalogue.end()) << name << " names profile " << profile_name;
      EXPECT_FALSE(profile->second.memory_only) << profile_name;
      EXPECT_EQ(profile->second.hbm_bytes, entry.hbm_bytes) << profile_name << " vs " << name;
    }
  }
  for (const char* profile :
       {"tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "h100-sxm", "h200", "b200", "gb200-nvl72", "mi300x"}) {
    EXPECT_TRUE(listed.contains(profile)) << profile << " has no memory-only entry";
  }
}

// docs/cost_validation.yaml, the published runs the step-time model is checked against: each names a
// built-in profile, a mesh of its chip count whose network factors divide their axes, and a config file
// that exists.
TEST(CostValidationDataTest, RunsNameProfilesMeshesAndConfigsThatExist) {
  StatusOr<Document> doc =
      ParseYamlDocument(testing::ReadTestFile("docs/cost_validation.yaml"), "docs/cost_validation.yaml");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  const Json& runs = doc->root()["runs"];
  ASSERT_TRUE(runs.is_array());
  EXPECT_GE(runs.size(), 8u);
  const schemas::DataSource data = schemas::DataSource::Embedded();
  std::set<std::string> ids;
  for (const Json& run : runs) {
    const std::string id = run["id"].get<std::string>();
    EXPECT_TRUE(ids.insert(id).second) << "duplicate id " << id;
    EXPECT_TRUE(data.Read("schemas/hardware/" + run["hardware"].get<std::string>() + ".yaml").ok()) << id;
    int64_t devices = 1;
    for (const auto& [axis, size] : run["mesh"].items()) devices *= size.get<int64_t>();
    EXPECT_EQ(devices, run["chips"].get<int64_t>()) << id;
    for (const auto& [axis, factor] : run["dcn"].items()) {
      ASSERT_TRUE(run["mesh"].contains(axis)) << id << " dcn axis " << axis;
      EXPECT_EQ(run["mesh"][axis].get<int64_t>() % factor.get<int64_t>(), 0) << id << " dcn axis " << axis;
    }
    // A training run's step, or a serving run's batch and tokens (docs/COST.md#validation-data).
    const bool serving = run.contains("serving");
    for (const char* key :
         serving ? std::vector<const char*>{"published", "source", "layout_confidence"}
                 : std::vector<const char*>{"global_batch", "seq", "published", "source", "layout_confidence"}) {
      EXPECT_TRUE(run.contains(key)) << id << " has no " << key;
    }
    if (serving) {
      for (const char* key : {"batch", "input", "output"}) {
        EXPECT_TRUE(run["serving"].contains(key)) << id << " serving has no " << key;
      }
      const Json& published = run["published"];
      EXPECT_TRUE(published.contains("ttft_ms") || published.contains("tpot_ms") ||
                  published.contains("output_tokens_per_s_per_chip"))
          << id << " publishes no serving figure";
    }
    EXPECT_TRUE(run["source"].contains("url")) << id << " names no source";
    const Json& config = run["model"]["config"];
    if (config.is_string()) {
      EXPECT_TRUE(std::filesystem::exists(testing::SourceDir() + "/" + config.get<std::string>())) << id;
    }
  }
}

// issue 44: every number a profile holds has a declared range (step/hardware_ranges.h), and the reader
// enforces each: a value just past either bound is an error at that field, naming the bound. Two base
// profiles between them hold every field (a network states `bandwidth` or its NICs, never both).
constexpr const char* kEveryField = R"({
  "hbm_bytes": 17179869184, "hbm_bandwidth": 819e9, "peak_flops_bf16": 197e12, "peak_flops_fp8": 394e12,
  "chips_per_host": 8,
  "fast": {"kind": "ici", "chips": 256, "torus": [16, 16], "wraparound": "full_dims", "bandwidth": 9e10,
           "latency": 1e-6, "base_latency": 8e-6,
           "low_latency": {"base_latency": 6.6e-6, "latency": 0.6e-6, "bandwidth": 87.7e9}},
  "network": {"kind": "dcn", "chips": 0, "bandwidth": 3.125e9, "latency": 14e-6, "base_latency": 8e-6,
              "low_latency": {"base_latency": 6.6e-6, "latency": 0.6e-6, "bandwidth": 10e9}},
  "efficiency": {"matmul": 0.8, "link": 0.8, "hbm": 0.9, "network": 0.9, "attention": 0.35,
                 "matmul_tiling": {"tiles": [[8, 128, 128]], "units": 132, "measured_at": [8192, 8192, 8192]}}
})";

Json EveryFieldProfile(bool nics) {
  Json profile = Json::parse(kEveryField);
  if (nics) {
    profile["network"].erase("bandwidth");
    profile["network"]["nics_per_host"] = 2;
    profile["network"]["nic_bandwidth"] = 12.5e9;
  }
  return profile;
}

StatusOr<HardwareProfile> ParseJsonProfile(const Json& profile) {
  EP_ASSIGN_OR_RETURN(Document doc, ParseYamlDocument(profile.dump(), "chip.yaml"));
  return ParseHardwareProfile(doc, "chip");
}

TEST(HardwareProfileTest, EveryFieldTheReaderReadsHasADeclaredRange) {
  for (bool nics : {false, true}) {
    StatusOr<HardwareProfile> profile = ParseJsonProfile(EveryFieldProfile(nics));
    ASSERT_TRUE(profile.ok()) << profile.status().ToString();  // an undeclared field is an internal error
  }
}

TEST(HardwareProfileTest, EachFieldsRangeIsEnforced) {
  for (const HardwareFieldRange& range : HardwareFieldRanges()) {
    std::string pointer = range.field;
    for (size_t at = pointer.find('*'); at != std::string::npos; at = pointer.find('*')) pointer.replace(at, 1, "0");
    const Json::json_pointer where(pointer);
    Json base = EveryFieldProfile(/*nics=*/false);
    if (!base.contains(where)) base = EveryFieldProfile(/*nics=*/true);
    ASSERT_TRUE(base.contains(where)) << "no base profile holds " << range.field;
    const bool bytes = range.unit == "bytes";
    for (bool above : {false, true}) {
      Json profile = base;
      if (range.integer || bytes) {
        profile[where] = above ? static_cast<int64_t>(range.max) + 1 : static_cast<int64_t>(range.min) - 1;
        if (bytes && !above) profile[where] = static_cast<int64_t>(range.min) / 2;
      } else {
        profile[where] = above ? range.max * 2 : range.min / 2;
      }
      StatusOr<HardwareProfile> parsed = ParseJsonProfile(profile);
      ASSERT_FALSE(parsed.ok()) << pointer << " = " << profile[where].dump() << " was accepted";
      const std::string error = parsed.status().ToString();
      EXPECT_NE(error.find(pointer + ": expected"), std::string::npos) << error;
      // A fraction past 1 is outside (0, 1] before it is outside its range; everything else names the bound.
      if (!(above && range.unit.empty() && !range.integer)) {
        EXPECT_NE(error.find(std::string(above ? range.max_text : range.min_text)), std::string::npos) << error;
      }
    }
    // The bounds themselves are accepted.
    for (double edge : {range.min, range.max}) {
      Json profile = base;
      if (range.integer || bytes) {
        profile[where] = static_cast<int64_t>(edge);
      } else {
        profile[where] = edge;
      }
      if (range.field == "/fast/torus/*" || range.field == "/fast/chips" || range.field == "/chips_per_host" ||
          range.field.starts_with("/network/nic") || range.field == "/network/bandwidth" ||
          range.field == "/network/chips") {
        continue;  // they must agree with other fields (torus x chips, the NICs' share per chip)
      }
      StatusOr<HardwareProfile> parsed = ParseJsonProfile(profile);
      EXPECT_TRUE(parsed.ok()) << pointer << " = " << profile[where].dump() << ": " << parsed.status().ToString();
    }
  }
}

// issue 44: chips_per_host 9223372036854775807 priced a step at 7.4e16 s, and nics_per_host x nic_bandwidth
// could reach infinity; the per-chip share the step-time model divides by has the network's range too.
TEST(HardwareProfileTest, TheNicsSharePerChipIsWithinTheNetworksRange) {
  EXPECT_NE(ErrorOf(With("chips_per_host", "chips_per_host: 9223372036854775807"))
                .find("/chips_per_host: expected an integer count of chips of at most 128, found 9223372036854775807"),
            std::string::npos);
  Json profile = EveryFieldProfile(/*nics=*/true);
  profile["chips_per_host"] = 1;
  profile["network"]["nics_per_host"] = 100;
  profile["network"]["nic_bandwidth"] = 1e12;
  StatusOr<HardwareProfile> parsed = ParseJsonProfile(profile);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().ToString().find("/network/nic_bandwidth: expected a network bandwidth per chip "
                                            "(nics_per_host x nic_bandwidth / chips_per_host) of at most 1e12"),
            std::string::npos)
      << parsed.status().ToString();
}

}  // namespace
}  // namespace easyplan::step
