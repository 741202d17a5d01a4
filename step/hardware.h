#ifndef EASYPLAN_STEP_HARDWARE_H_
#define EASYPLAN_STEP_HARDWARE_H_

// An accelerator as the step-time model (step/step_time.h) and the memory budget see it: one profile
// per chip under schemas/hardware/NAME.yaml, every figure with its source in the file. Units are SI
// base units throughout (bytes, bytes per second, FLOP per second, seconds) so no figure carries a
// hidden scale; bandwidths are per chip and per direction, the figure a ring collective's step uses.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/document.h"
#include "core/status.h"

namespace easyplan::step {

/// A set of links between chips: the fast domain (an NVLink node, a TPU ICI slice) or the network
/// between domains (InfiniBand/RoCE per GPU, TPU DCN per host).
struct LinkDomain {
  std::string kind;  ///< "nvlink", "xgmi", "ici" (fast); "infiniband", "roce", "dcn" (network)
  /// Fast domain: chips that reach each other over these links (8 for an HGX node, the slice for a
  /// TPU pod: 4096 for v4). Network: 0 (any number).
  int64_t chips = 0;
  /// TPU ICI: the torus dims of the largest slice ({16, 16, 16} for v4); empty for switched links,
  /// where every chip reaches every other at full bandwidth.
  std::vector<int64_t> torus;
  /// Bytes per second one chip sends (and, at once, receives) over these links in a collective: the
  /// whole NVLink bandwidth of a GPU, the sum of a TPU chip's ICI links usable along one ring, the NIC
  /// bandwidth a GPU (or a TPU host, divided by its chips) has on the network.
  double bandwidth = 0;
  double latency = 0;       ///< seconds per step of a ring collective (one hop)
  double base_latency = 0;  ///< seconds a collective costs before its first step (NCCL's baseLat); 0 = none
  /// NCCL's low-latency (LL) protocol, which its tuner picks for small messages: a lower per-step
  /// latency at a fraction of the bandwidth. Absent (0) where the links have no such protocol (TPU ICI).
  struct LowLatency {
    double base_latency = 0, latency = 0;  ///< seconds, as above
    double bandwidth = 0;                  ///< bytes per second per chip the protocol reaches (NCCL's llMaxBw)
  };
  std::optional<LowLatency> low_latency;
  /// TPU ICI (with `torus`): which dims of a slice have wraparound links. "full_cubes" (v4, v5p): every
  /// dim of a slice made of whole 4x4x4 cubes; "full_dims" (v5e, v6e): a dim as long as the torus's.
  std::string wraparound;
  /// Network: the NICs of one host and the bytes per second each sends in one direction. When given,
  /// `bandwidth` is their share per chip: nics_per_host x nic_bandwidth / chips_per_host. 0 = not given
  /// (the profile states `bandwidth` per chip itself).
  int64_t nics_per_host = 0;
  double nic_bandwidth = 0;
};

/// How a matmul's per-device shape wastes the matrix units (step/matmul_tiling.h, docs/COST.md "Matmul
/// efficiency by shape"): every dim is padded to a whole tile, and on a GPU the output tiles run in waves
/// over the SMs. Absent where no tiling is published: every matmul then runs at the matmul efficiency.
struct MatmulTiling {
  /// The tiles a kernel library picks from, each {m, n, k} (a dim of 1 is not padded), most efficient
  /// first (cuBLAS's 256x128 before its 64x64; a TPU MXU's one).
  std::vector<std::array<int64_t, 3>> tiles;
  int64_t units = 0;  ///< SMs the output tiles fill, one wave at a time; 0 = no wave model (a TPU core)
  /// The {m, n, k} the profile's matmul efficiency was measured at: that shape runs at that efficiency.
  std::array<int64_t, 3> measured_at = {0, 0, 0};
};

/// An entry of the hardware catalogue (schemas/hardware/, docs/COST.md "Hardware profiles"): a full
/// profile, whose figures price a step, or an accelerator with memory figures only (`memory_only`), which
/// budgets memory (memory, validate, report, activations) and names the full profiles of its part.
struct HardwareProfile {
  std::string name;         ///< "tpu-v5p": the file's stem and what --hardware takes
  std::string description;  ///< "Google TPU v5p"
  std::string source;       ///< the file it came from (messages name it)
  int64_t hbm_bytes = 0;    ///< HBM per chip
  /// Memory figures only: hbm_bytes and the fields below; every figure after them is absent.
  bool memory_only = false;
  std::vector<std::string> profiles;     ///< memory-only: the full profiles of the same part, maybe none
  std::string note;                      ///< memory-only: which part each profile is, when the name covers several
  double hbm_bandwidth = 0;              ///< bytes per second
  double peak_flops_bf16 = 0;            ///< dense, per chip
  std::optional<double> peak_flops_fp8;  ///< dense, per chip, where the chip has fp8 matmuls
  int64_t chips_per_host = 1;            ///< TPU: 4; GPU: the node's GPUs (the fast domain)
  LinkDomain fast;
  LinkDomain network;
  /// Achievable fractions (each in (0, 1], with its source in the file): of the peak FLOP/s in large
  /// matmuls, of the link bandwidth in collectives, of the HBM bandwidth in memory-bound ops.
  double matmul_efficiency = 1;
  double link_efficiency = 1;
  double hbm_efficiency = 1;
  /// Of the network's bandwidth (InfiniBand, RoCE, DCN) in collectives, as measured on that network;
  /// absent where none is published (the fast links' `link_efficiency` stands in, and the file says so).
  std::optional<double> network_efficiency;
  /// Of the peak FLOP/s in a fused attention kernel's forward and backward (flash attention), as its
  /// authors measured it on this chip; absent where none is published (the matmul efficiency stands in).
  std::optional<double> attention_efficiency;
  std::optional<MatmulTiling> matmul_tiling;
};

/// Parses one catalogue file: a full profile, or with `memory_only: true` an accelerator's memory
/// (description, hbm_bytes, profiles, note). BadInput naming the file and key for a missing or wrong
/// field (a negative bandwidth, an efficiency outside (0, 1], an unknown key with a did-you-mean).
StatusOr<HardwareProfile> ParseHardwareProfile(const Document& doc, const std::string& name);

}  // namespace easyplan::step

#endif  // EASYPLAN_STEP_HARDWARE_H_
