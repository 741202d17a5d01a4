#include "planner/hardware.h"

#include <cmath>
#include <optional>
#include <string_view>
#include <utility>

#include "core/byte_size.h"
#include "core/checked_math.h"
#include "core/did_you_mean.h"
#include "core/json_pointer.h"

namespace easyplan::planner {
namespace {

// The keys of a profile file (docs/COST.md#hardware-profiles), one per HardwareProfile field.
const std::vector<std::string>& TopKeys() {
  static const std::vector<std::string> keys = {"description",    "hbm_bytes",      "hbm_bandwidth", "peak_flops_bf16",
                                                "peak_flops_fp8", "chips_per_host", "fast",          "network",
                                                "efficiency"};
  return keys;
}
// The keys of each link domain: a torus and its wraparound belong to the fast domain, the NICs to the
// network.
const std::vector<std::string>& FastLinkKeys() {
  static const std::vector<std::string> keys = {"kind",      "chips",   "torus",        "wraparound",
                                                "bandwidth", "latency", "base_latency", "low_latency"};
  return keys;
}
const std::vector<std::string>& NetworkLinkKeys() {
  static const std::vector<std::string> keys = {"kind",          "chips",   "bandwidth",    "nics_per_host",
                                                "nic_bandwidth", "latency", "base_latency", "low_latency"};
  return keys;
}
// Which dims of a TPU slice wrap around (docs/COST.md, "The topology"): "full_cubes" on v4 and v5p,
// "full_dims" on v5e and v6e.
const std::vector<std::string>& WraparoundKinds() {
  static const std::vector<std::string> kinds = {"full_cubes", "full_dims"};
  return kinds;
}
const std::vector<std::string>& LowLatencyKeys() {
  static const std::vector<std::string> keys = {"base_latency", "latency", "bandwidth"};
  return keys;
}
const std::vector<std::string>& EfficiencyKeys() {
  static const std::vector<std::string> keys = {"matmul", "link", "hbm", "network", "attention", "matmul_tiling"};
  return keys;
}
const std::vector<std::string>& TilingKeys() {
  static const std::vector<std::string> keys = {"tiles", "units", "measured_at"};
  return keys;
}
// The link kinds the step-time model knows, per domain: a torus (ici) or a switch (the others).
const std::vector<std::string>& FastKinds() {
  static const std::vector<std::string> kinds = {"nvlink", "xgmi", "ici"};
  return kinds;
}
const std::vector<std::string>& NetworkKinds() {
  static const std::vector<std::string> kinds = {"infiniband", "roce", "dcn"};
  return kinds;
}

/// Reads one profile document, every error at the file:line of the value it is about.
class ProfileReader {
 public:
  explicit ProfileReader(const Document& doc) : doc_(doc) {}

  Status Error(const std::string& pointer, std::string message, std::vector<std::string> notes = {}) const {
    return Status::BadInput(doc_.Locate(pointer), std::move(message), std::move(notes));
  }

  /// `value` at `pointer` must be a mapping whose keys are all in `allowed`.
  Status CheckMapping(const Json& value, const std::string& pointer, const std::vector<std::string>& allowed,
                      std::string_view what) const {
    if (!value.is_object()) {
      return Error(pointer, "expected " + std::string(what) + " (a mapping), found " + Found(value));
    }
    for (const auto& [key, member] : value.items()) {
      bool known = false;
      for (const std::string& name : allowed) known = known || name == key;
      if (known) continue;
      std::string message = "unknown key '" + key + "'";
      if (auto suggestion = SuggestClosest(key, allowed)) message += " (did you mean '" + *suggestion + "'?)";
      return Error(PointerToMember(pointer, key), message,
                   {"the keys of " + std::string(what) + " are " + JoinQuoted(allowed)});
    }
    return Status();
  }

  /// The member `key` of the mapping `object` (at `pointer`); BadInput when it is missing.
  StatusOr<const Json*> Required(const Json& object, const std::string& pointer, const std::string& key,
                                 std::string_view expected) const {
    auto it = object.find(key);
    if (it == object.end()) {
      return Error(pointer, "missing key '" + key + "': expected " + std::string(expected));
    }
    return &*it;
  }

  /// A finite number greater than 0 (or, with `at_most_one`, in (0, 1]): the cost model divides by it.
  StatusOr<double> Positive(const Json& value, const std::string& pointer, std::string_view unit,
                            bool at_most_one = false) const {
    const std::string expected = at_most_one ? "a fraction in (0, 1]" : "a positive number of " + std::string(unit);
    if (!value.is_number()) return Error(pointer, "expected " + expected + ", found " + Found(value));
    const double number = value.get<double>();
    if (!std::isfinite(number)) {  // a YAML .inf or .nan (JSON has neither)
      return Error(pointer, "expected a finite number" +
                                (at_most_one ? std::string(" in (0, 1]") : " of " + std::string(unit)) + ", found " +
                                JsonForMessage(value));
    }
    if (!(number > 0) || (at_most_one && number > 1)) {
      return Error(pointer, "expected " + expected + ", found " + JsonForMessage(value));
    }
    // Plausible ranges, so that no step is priced at infinity (a 1e-300 efficiency or a 1e307 s latency
    // did): nothing runs at under 1% of its peak, and a ring step of over a second is no interconnect.
    if (at_most_one && number < 0.01) {
      return Error(pointer, "expected a fraction of at least 0.01 (1%), found " + JsonForMessage(value));
    }
    if (unit == "seconds" && number > 1) {
      return Error(pointer, "expected at most 1 second (latencies are microseconds), found " + JsonForMessage(value));
    }
    return number;
  }

  /// A Positive figure of at least `minimum`, which `minimum_text` spells as the message shows it: a
  /// rate far below any accelerator's is a typo, and dividing by it prices a step at infinity.
  StatusOr<double> AtLeast(const Json& value, const std::string& pointer, std::string_view unit, double minimum,
                           std::string_view minimum_text) const {
    EP_ASSIGN_OR_RETURN(const double number, Positive(value, pointer, unit));
    if (number < minimum) {
      return Error(pointer, "expected at least " + std::string(minimum_text) + ", found " + JsonForMessage(value));
    }
    return number;
  }

  /// A peak matmul rate: at least 1 TFLOP/s, below every accelerator easyplan prices (a v5e does 197).
  StatusOr<double> PeakFlops(const Json& value, const std::string& pointer) const {
    return AtLeast(value, pointer, "FLOP per second", 1e12, "1e12 FLOP per second (1 TFLOP/s)");
  }

  /// A memory or link bandwidth: at least 1 GB/s, below any HBM or interconnect (PCIe 1.0 x1 is 0.25 GB/s
  /// per direction, a datacenter NIC 12.5 GB/s or more).
  StatusOr<double> Bandwidth(const Json& value, const std::string& pointer) const {
    return AtLeast(value, pointer, "bytes per second", 1e9, "1e9 bytes per second (1 GB/s)");
  }

  /// An integer at least `minimum`.
  StatusOr<int64_t> Integer(const Json& value, const std::string& pointer, int64_t minimum,
                            std::string_view what) const {
    const std::string expected = "an integer " + std::string(what) + " of at least " + std::to_string(minimum);
    if (!value.is_number_integer() ||
        (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
      return Error(pointer, "expected " + expected + ", found " + Found(value));
    }
    const int64_t number = value.get<int64_t>();
    if (number < minimum) return Error(pointer, "expected " + expected + ", found " + std::to_string(number));
    return number;
  }

  /// Bytes: a byte-size string ("95GiB", core/byte_size.h) or an integer; more than 0.
  StatusOr<int64_t> Bytes(const Json& value, const std::string& pointer) const {
    if (value.is_string()) {
      StatusOr<int64_t> bytes = ParseByteSize(value.get<std::string>(), pointer);
      if (!bytes.ok()) {
        return Error(pointer, "expected a byte size such as \"95GiB\" or \"80GB\", found " + JsonForMessage(value));
      }
      if (*bytes > 0) return *bytes;
    } else if (value.is_number_integer() && !value.is_number_unsigned() && value.get<int64_t>() > 0) {
      return value.get<int64_t>();
    } else if (value.is_number_unsigned() && value.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
      if (value.get<uint64_t>() > 0) return static_cast<int64_t>(value.get<uint64_t>());
    }
    return Error(pointer, "expected a positive byte size such as \"95GiB\" (or an integer), found " + Found(value));
  }

  /// A closed-vocabulary string.
  StatusOr<std::string> Choice(const Json& value, const std::string& pointer, const std::vector<std::string>& choices,
                               std::string_view noun = "link kind") const {
    if (!value.is_string()) return Error(pointer, "expected one of " + JoinQuoted(choices) + ", found " + Found(value));
    std::string text = value.get<std::string>();
    for (const std::string& choice : choices) {
      if (choice == text) return text;
    }
    std::string message = "unknown " + std::string(noun) + " '" + text + "'";
    if (auto suggestion = SuggestClosest(text, choices)) message += " (did you mean '" + *suggestion + "'?)";
    return Error(pointer, message, {"expected one of " + JoinQuoted(choices)});
  }

  StatusOr<LinkDomain> Link(const Json& root, const std::string& key, bool fast, int64_t chips_per_host) const {
    const std::string pointer = PointerToMember("", key);
    const std::string what = fast ? "the fast domain" : "the network between fast domains";
    EP_ASSIGN_OR_RETURN(const Json* link, Required(root, "", key, what + " {kind, chips, bandwidth, latency}"));
    EP_RETURN_IF_ERROR(CheckMapping(*link, pointer, fast ? FastLinkKeys() : NetworkLinkKeys(), what));
    LinkDomain domain;
    EP_ASSIGN_OR_RETURN(const Json* kind,
                        Required(*link, pointer, "kind", "one of " + JoinQuoted(fast ? FastKinds() : NetworkKinds())));
    EP_ASSIGN_OR_RETURN(domain.kind, Choice(*kind, pointer + "/kind", fast ? FastKinds() : NetworkKinds()));
    if (auto chips = link->find("chips"); chips != link->end()) {
      EP_ASSIGN_OR_RETURN(domain.chips, Integer(*chips, pointer + "/chips", 0, "count of chips"));
    } else if (fast) {
      return Error(pointer, "missing key 'chips': expected the chips the fast links join (8 for an HGX node)");
    }
    if (auto torus = link->find("torus"); torus != link->end()) {
      const std::string torus_pointer = pointer + "/torus";
      if (!torus->is_array() || torus->empty()) {
        return Error(torus_pointer, "expected the torus dims as a list such as [16, 16, 16], found " + Found(*torus));
      }
      for (size_t i = 0; i < torus->size(); ++i) {
        EP_ASSIGN_OR_RETURN(int64_t dim, Integer((*torus)[i], PointerToElement(torus_pointer, i), 1, "torus dim"));
        domain.torus.push_back(dim);
      }
      // The chips of a torus slice are its dims' product: the two figures must tell the same story.
      const std::optional<int64_t> product = CheckedProduct(domain.torus);
      if (product != domain.chips) {
        return Error(torus_pointer, "the torus dims multiply to " +
                                        (product ? std::to_string(*product) : std::string("more than int64")) +
                                        ", but 'chips' is " + std::to_string(domain.chips) +
                                        ": expected them to agree");
      }
    }
    // A torus says which of a slice's dims wrap around; the one without the other is half a topology.
    if (auto wrap = link->find("wraparound"); wrap != link->end()) {
      if (domain.torus.empty()) {
        return Error(pointer + "/wraparound",
                     "expected 'wraparound' only beside a 'torus' (it says which torus dims wrap), found no torus");
      }
      EP_ASSIGN_OR_RETURN(domain.wraparound,
                          Choice(*wrap, pointer + "/wraparound", WraparoundKinds(), "wraparound rule"));
    } else if (!domain.torus.empty()) {
      return Error(pointer,
                   "missing key 'wraparound': expected which dims of a slice of the torus wrap around, one of " +
                       JoinQuoted(WraparoundKinds()));
    }
    // The network's bandwidth per chip: stated, or the host's NICs shared by its chips (never both, so
    // that no NIC is counted twice).
    const auto stated = link->find("bandwidth");
    const auto nics = link->find("nics_per_host");
    const auto nic_rate = link->find("nic_bandwidth");
    if (nics != link->end() || nic_rate != link->end()) {
      if (stated != link->end()) {
        return Error(pointer + "/bandwidth",
                     "expected either 'bandwidth' (per chip) or 'nics_per_host' with 'nic_bandwidth', found both");
      }
      if (nics == link->end()) {
        return Error(pointer, "missing key 'nics_per_host': expected the NICs of one host beside 'nic_bandwidth'");
      }
      if (nic_rate == link->end()) {
        return Error(pointer,
                     "missing key 'nic_bandwidth': expected the bytes per second one NIC sends in one direction");
      }
      EP_ASSIGN_OR_RETURN(domain.nics_per_host, Integer(*nics, pointer + "/nics_per_host", 1, "count of NICs"));
      EP_ASSIGN_OR_RETURN(domain.nic_bandwidth, Bandwidth(*nic_rate, pointer + "/nic_bandwidth"));
      domain.bandwidth =
          static_cast<double>(domain.nics_per_host) * domain.nic_bandwidth / static_cast<double>(chips_per_host);
    } else {
      EP_ASSIGN_OR_RETURN(const Json* bandwidth,
                          Required(*link, pointer, "bandwidth", "bytes per second per chip and direction"));
      EP_ASSIGN_OR_RETURN(domain.bandwidth, Bandwidth(*bandwidth, pointer + "/bandwidth"));
    }
    EP_ASSIGN_OR_RETURN(const Json* latency, Required(*link, pointer, "latency", "seconds per ring step"));
    EP_ASSIGN_OR_RETURN(domain.latency, Positive(*latency, pointer + "/latency", "seconds"));
    if (auto base = link->find("base_latency"); base != link->end()) {
      EP_ASSIGN_OR_RETURN(domain.base_latency, Positive(*base, pointer + "/base_latency", "seconds"));
    }
    if (auto ll = link->find("low_latency"); ll != link->end()) {
      const std::string ll_pointer = pointer + "/low_latency";
      const std::string ll_what = "the low-latency protocol {base_latency, latency, bandwidth}";
      EP_RETURN_IF_ERROR(CheckMapping(*ll, ll_pointer, LowLatencyKeys(), ll_what));
      LinkDomain::LowLatency protocol;
      EP_ASSIGN_OR_RETURN(const Json* ll_base, Required(*ll, ll_pointer, "base_latency", "seconds"));
      EP_ASSIGN_OR_RETURN(protocol.base_latency, Positive(*ll_base, ll_pointer + "/base_latency", "seconds"));
      EP_ASSIGN_OR_RETURN(const Json* ll_step, Required(*ll, ll_pointer, "latency", "seconds per ring step"));
      EP_ASSIGN_OR_RETURN(protocol.latency, Positive(*ll_step, ll_pointer + "/latency", "seconds"));
      EP_ASSIGN_OR_RETURN(const Json* ll_bw, Required(*ll, ll_pointer, "bandwidth", "bytes per second per chip"));
      EP_ASSIGN_OR_RETURN(protocol.bandwidth, Bandwidth(*ll_bw, ll_pointer + "/bandwidth"));
      domain.low_latency = protocol;
    }
    return domain;
  }

  /// A list of three positive integers {m, n, k} at `pointer` (a tile, or a measured matmul's shape).
  StatusOr<std::array<int64_t, 3>> Triple(const Json& value, const std::string& pointer, std::string_view what) const {
    if (!value.is_array() || value.size() != 3) {
      return Error(pointer, "expected " + std::string(what) + " as [m, n, k], found " + Found(value));
    }
    std::array<int64_t, 3> dims = {0, 0, 0};
    for (size_t i = 0; i < 3; ++i) {
      EP_ASSIGN_OR_RETURN(dims[i], Integer(value[i], PointerToElement(pointer, i), 1, "dim"));
    }
    return dims;
  }

  /// efficiency/matmul_tiling: {tiles: [[m, n, k], ...], units, measured_at: [m, n, k]}.
  StatusOr<MatmulTiling> Tiling(const Json& value, const std::string& pointer) const {
    EP_RETURN_IF_ERROR(CheckMapping(value, pointer, TilingKeys(), "the matmul tiling {tiles, units, measured_at}"));
    MatmulTiling tiling;
    EP_ASSIGN_OR_RETURN(const Json* tiles, Required(value, pointer, "tiles", "the tiles, each [m, n, k]"));
    const std::string tiles_pointer = pointer + "/tiles";
    if (!tiles->is_array() || tiles->empty()) {
      return Error(tiles_pointer, "expected a list of tiles such as [[128, 256, 1]], found " + Found(*tiles));
    }
    for (size_t i = 0; i < tiles->size(); ++i) {
      EP_ASSIGN_OR_RETURN(auto tile, Triple((*tiles)[i], PointerToElement(tiles_pointer, i), "a tile"));
      tiling.tiles.push_back(tile);
    }
    if (auto units = value.find("units"); units != value.end()) {
      EP_ASSIGN_OR_RETURN(tiling.units, Integer(*units, pointer + "/units", 1, "count of SMs"));
    }
    EP_ASSIGN_OR_RETURN(const Json* measured,
                        Required(value, pointer, "measured_at", "the [m, n, k] the matmul efficiency was measured at"));
    EP_ASSIGN_OR_RETURN(tiling.measured_at, Triple(*measured, pointer + "/measured_at", "a matmul shape"));
    return tiling;
  }

 private:
  static std::string Found(const Json& value) {
    return std::string(JsonTypeName(value)) + (value.is_null() ? "" : " " + JsonForMessage(value));
  }

  const Document& doc_;
};

}  // namespace

StatusOr<HardwareProfile> ParseHardwareProfile(const Document& doc, const std::string& name) {
  const ProfileReader reader(doc);
  const Json& root = doc.root();
  EP_RETURN_IF_ERROR(reader.CheckMapping(root, "", TopKeys(), "a hardware profile"));
  HardwareProfile profile;
  profile.name = name;
  profile.source = doc.file();
  if (auto description = root.find("description"); description != root.end()) {
    if (!description->is_string()) {
      return reader.Error("/description", "expected a string such as \"Google TPU v5p\", found " +
                                              std::string(JsonTypeName(*description)));
    }
    profile.description = description->get<std::string>();
  }
  EP_ASSIGN_OR_RETURN(const Json* hbm, reader.Required(root, "", "hbm_bytes", "the HBM of one chip, e.g. 95GiB"));
  EP_ASSIGN_OR_RETURN(profile.hbm_bytes, reader.Bytes(*hbm, "/hbm_bytes"));
  EP_ASSIGN_OR_RETURN(const Json* hbm_bandwidth,
                      reader.Required(root, "", "hbm_bandwidth", "bytes per second, e.g. 2765e9"));
  EP_ASSIGN_OR_RETURN(profile.hbm_bandwidth, reader.Bandwidth(*hbm_bandwidth, "/hbm_bandwidth"));
  EP_ASSIGN_OR_RETURN(const Json* bf16,
                      reader.Required(root, "", "peak_flops_bf16", "dense FLOP per second, e.g. 459e12"));
  EP_ASSIGN_OR_RETURN(profile.peak_flops_bf16, reader.PeakFlops(*bf16, "/peak_flops_bf16"));
  if (auto fp8 = root.find("peak_flops_fp8"); fp8 != root.end()) {
    EP_ASSIGN_OR_RETURN(profile.peak_flops_fp8, reader.PeakFlops(*fp8, "/peak_flops_fp8"));
  }
  EP_ASSIGN_OR_RETURN(const Json* per_host,
                      reader.Required(root, "", "chips_per_host", "the chips one host drives (TPU 4 or 8, GPU 8)"));
  EP_ASSIGN_OR_RETURN(profile.chips_per_host, reader.Integer(*per_host, "/chips_per_host", 1, "count of chips"));
  EP_ASSIGN_OR_RETURN(profile.fast, reader.Link(root, "fast", /*fast=*/true, profile.chips_per_host));
  EP_ASSIGN_OR_RETURN(profile.network, reader.Link(root, "network", /*fast=*/false, profile.chips_per_host));
  EP_ASSIGN_OR_RETURN(const Json* efficiency,
                      reader.Required(root, "", "efficiency", "the achievable fractions {matmul, link, hbm}"));
  EP_RETURN_IF_ERROR(reader.CheckMapping(*efficiency, "/efficiency", EfficiencyKeys(), "the efficiencies"));
  for (const auto& [key, field] : {std::pair<std::string, double*>{"matmul", &profile.matmul_efficiency},
                                   std::pair<std::string, double*>{"link", &profile.link_efficiency},
                                   std::pair<std::string, double*>{"hbm", &profile.hbm_efficiency}}) {
    EP_ASSIGN_OR_RETURN(const Json* value, reader.Required(*efficiency, "/efficiency", key, "a fraction in (0, 1]"));
    EP_ASSIGN_OR_RETURN(*field, reader.Positive(*value, "/efficiency/" + key, "", /*at_most_one=*/true));
  }
  if (auto network = efficiency->find("network"); network != efficiency->end()) {
    EP_ASSIGN_OR_RETURN(profile.network_efficiency,
                        reader.Positive(*network, "/efficiency/network", "", /*at_most_one=*/true));
  }
  if (auto attention = efficiency->find("attention"); attention != efficiency->end()) {
    EP_ASSIGN_OR_RETURN(profile.attention_efficiency,
                        reader.Positive(*attention, "/efficiency/attention", "", /*at_most_one=*/true));
  }
  if (auto tiling = efficiency->find("matmul_tiling"); tiling != efficiency->end()) {
    EP_ASSIGN_OR_RETURN(profile.matmul_tiling, reader.Tiling(*tiling, "/efficiency/matmul_tiling"));
  }
  return profile;
}

}  // namespace easyplan::planner
