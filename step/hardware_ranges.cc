#include "step/hardware_ranges.h"

#include <algorithm>
#include <utility>

#include "core/json_pointer.h"
#include "core/number_literal.h"

namespace easyplan::step {
namespace {

// The bounds, each with the parts it comes from (vendors' spec sheets; NCCL src/graph/tuning.cc for
// the latencies). docs/RELIABILITY.md's limits table repeats them.
constexpr std::string_view kPeakBasis =
    "the slowest bf16 accelerator, NVIDIA A2, does 18 TFLOP/s dense; the fastest, NVIDIA B300 and AMD MI355X, "
    "2.5 PFLOP/s bf16 and 5 PFLOP/s fp8 dense";
constexpr std::string_view kHbmBandwidthBasis =
    "the slowest accelerator memory, NVIDIA A2's GDDR6, moves 200 GB/s; the fastest, B200/B300 and MI355X HBM3E, "
    "8 TB/s";
constexpr std::string_view kHbmBytesBasis =
    "the smallest accelerator memory is 16 GB (TPU v5e, NVIDIA T4 and A2); the largest 288 GB (NVIDIA B300, "
    "AMD MI355X)";
constexpr std::string_view kFastBandwidthBasis =
    "the slowest fast domain is PCIe 3.0 x16, 16 GB/s; the fastest, NVLink 5 (B200, GB200), 900 GB/s per "
    "direction";
constexpr std::string_view kNetworkBandwidthBasis =
    "the slowest network is 10 GbE, 1.25 GB/s; the fastest NIC, 800 Gb/s (ConnectX-8), 100 GB/s";
constexpr std::string_view kLatencyBasis =
    "the shortest step is NCCL's LL protocol over NVLink, 0.6 us; the longest, NCCL's network step, 14 us "
    "(NCCL src/graph/tuning.cc)";
constexpr std::string_view kEfficiencyBasis =
    "the lowest published efficiency is FlashAttention-2's 35% of an H100; the highest under 100%";
constexpr std::string_view kChipsPerHostBasis = "one GPU per host at least; at most 16 (HGX-2, DGX-2)";
constexpr std::string_view kDomainChipsBasis =
    "0 means any number; the largest fast domain is a TPU pod, 9,216 chips (Ironwood), 8,960 (v5p)";
constexpr std::string_view kTorusBasis = "the longest torus dim is 28 (TPU v5p's pod, 16 x 20 x 28)";
constexpr std::string_view kNicsBasis = "a host has 1 NIC at least; 8 compute NICs (DGX H100, DGX B200)";
constexpr std::string_view kTileBasis =
    "tiles run from 1 to 256 (cuBLAS's 256x128, a TPU v6e MXU's 256x256); matmul shapes measured up to 16,128; "
    "SMs or CUs per chip up to 304 (MI300X)";

HardwareFieldRange Real(std::string field, std::string_view unit, double min, double max, std::string_view min_text,
                        std::string_view max_text, std::string_view basis) {
  return {std::move(field), unit, false, min, max, min_text, max_text, basis};
}
HardwareFieldRange Count(std::string field, double min, double max, std::string_view min_text,
                         std::string_view max_text, std::string_view basis) {
  return {std::move(field), "", true, min, max, min_text, max_text, basis};
}

std::vector<HardwareFieldRange> Build() {
  std::vector<HardwareFieldRange> table = {
      Real("/hbm_bytes", "bytes", 2.0 * (1LL << 30), 3.0 * (1LL << 40), "2GiB", "3TiB", kHbmBytesBasis),
      Real("/hbm_bandwidth", "bytes per second", 2e10, 1e14, "2e10 bytes per second (20 GB/s)",
           "1e14 bytes per second (100 TB/s)", kHbmBandwidthBasis),
      Real("/peak_flops_bf16", "FLOP per second", 1e12, 3e16, "1e12 FLOP per second (1 TFLOP/s)",
           "3e16 FLOP per second (30 PFLOP/s)", kPeakBasis),
      Real("/peak_flops_fp8", "FLOP per second", 1e12, 5e16, "1e12 FLOP per second (1 TFLOP/s)",
           "5e16 FLOP per second (50 PFLOP/s)", kPeakBasis),
      Count("/chips_per_host", 1, 128, "1", "128", kChipsPerHostBasis),
  };
  for (std::string_view domain : {"fast", "network"}) {
    const bool fast = domain == "fast";
    auto name = [&](std::string_view rest) { return "/" + std::string(domain) + std::string(rest); };
    table.push_back(Count(name("/chips"), 0, 1e5, "0", "100000", kDomainChipsBasis));
    if (fast) table.push_back(Count(name("/torus/*"), 1, 288, "1", "288", kTorusBasis));
    const double top = fast ? 1e13 : 1e12;
    const std::string_view top_text = fast ? "1e13 bytes per second (10 TB/s)" : "1e12 bytes per second (1 TB/s)";
    const std::string_view basis = fast ? kFastBandwidthBasis : kNetworkBandwidthBasis;
    table.push_back(
        Real(name("/bandwidth"), "bytes per second", 1e9, top, "1e9 bytes per second (1 GB/s)", top_text, basis));
    if (!fast) {
      table.push_back(Count(name("/nics_per_host"), 1, 100, "1", "100", kNicsBasis));
      table.push_back(Real(name("/nic_bandwidth"), "bytes per second", 1e9, 1e12, "1e9 bytes per second (1 GB/s)",
                           "1e12 bytes per second (1 TB/s)", kNetworkBandwidthBasis));
    }
    for (std::string_view latency :
         {"/latency", "/base_latency", "/low_latency/base_latency", "/low_latency/latency"}) {
      table.push_back(
          Real(name(latency), "seconds", 5e-8, 2e-4, "5e-8 seconds (50 ns)", "2e-4 seconds (200 us)", kLatencyBasis));
    }
    table.push_back(Real(name("/low_latency/bandwidth"), "bytes per second", 1e9, top, "1e9 bytes per second (1 GB/s)",
                         top_text, basis));
  }
  for (std::string_view fraction :
       {"/efficiency/matmul", "/efficiency/link", "/efficiency/hbm", "/efficiency/network", "/efficiency/attention"}) {
    table.push_back(Real(std::string(fraction), "", 0.03, 1, "0.03 (3%)", "1", kEfficiencyBasis));
  }
  table.push_back(Count("/efficiency/matmul_tiling/tiles/*/*", 1, 2560, "1", "2560", kTileBasis));
  table.push_back(Count("/efficiency/matmul_tiling/units", 1, 3040, "1", "3040", kTileBasis));
  table.push_back(Count("/efficiency/matmul_tiling/measured_at/*", 1, 161280, "1", "161280", kTileBasis));
  return table;
}

// "/fast/torus/1" matches "/fast/torus/*": every all-digit segment of `pointer` reads as "*".
bool Matches(std::string_view pattern, std::string_view pointer) {
  const std::vector<std::string> want = SplitPointer(pattern), got = SplitPointer(pointer);
  if (want.size() != got.size()) return false;
  for (size_t i = 0; i < want.size(); ++i) {
    const bool index = !got[i].empty() && std::all_of(got[i].begin(), got[i].end(), IsAsciiDigit);
    if (want[i] != got[i] && !(want[i] == "*" && index)) return false;
  }
  return true;
}

}  // namespace

const std::vector<HardwareFieldRange>& HardwareFieldRanges() {
  static const std::vector<HardwareFieldRange>* const table = new std::vector<HardwareFieldRange>(Build());
  return *table;
}

std::optional<HardwareFieldRange> FindHardwareFieldRange(std::string_view pointer) {
  for (const HardwareFieldRange& range : HardwareFieldRanges()) {
    if (Matches(range.field, pointer)) return range;
  }
  return std::nullopt;
}

}  // namespace easyplan::step
