#include "step/hardware.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string_view>
#include <utility>

#include "core/byte_size.h"
#include "core/checked_math.h"
#include "core/did_you_mean.h"
#include "core/json_pointer.h"
#include "step/hardware_ranges.h"

namespace easyplan::step {
namespace {

// The keys of a profile file (docs/COST.md#hardware-profiles), one per HardwareProfile field.
const std::vector<std::string>& TopKeys() {
  static const std::vector<std::string> keys = {"description",    "hbm_bytes",      "hbm_bandwidth", "peak_flops_bf16",
                                                "peak_flops_fp8", "chips_per_host", "fast",          "network",
                                                "efficiency",     "memory_only"};
  return keys;
}
// The keys of a memory-only entry.
const std::vector<std::string>& MemoryOnlyKeys() {
  static const std::vector<std::string> keys = {"description", "memory_only", "hbm_bytes", "profiles", "note"};
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

  /// The declared range of the field at `pointer` (step/hardware_ranges.h). A field without one is
  /// a bug here, not in the file: every number a profile holds has a plausible range.
  StatusOr<HardwareFieldRange> RangeOf(const std::string& pointer) const {
    std::optional<HardwareFieldRange> range = FindHardwareFieldRange(pointer);
    if (!range) return Status::Internal("hardware profile field " + pointer + " has no declared range");
    return *range;
  }

  /// `number` (as the file spells it: `shown`) within the field's declared range, or BadInput naming
  /// the bound it passes and, in a note, the range and the parts it comes from.
  Status InRange(const HardwareFieldRange& range, double number, const std::string& pointer, const std::string& shown,
                 const std::string& prefix = "") const {
    if (number >= range.min && number <= range.max) return Status();
    const bool below = number < range.min;
    return Error(pointer,
                 "expected " + prefix +
                     (below ? "at least " + std::string(range.min_text) : "at most " + std::string(range.max_text)) +
                     ", found " + shown,
                 {"the plausible range of " + range.field + " is " + std::string(range.min_text) + " to " +
                  std::string(range.max_text) + ", within about 10x of the parts that exist: " +
                  std::string(range.basis) + " (docs/RELIABILITY.md, \"Limits\")"});
  }

  /// A real figure: finite, greater than 0 (a fraction at most 1), within its declared range. The cost
  /// model divides by it, so a figure outside the range would price a step at 0 or infinity.
  StatusOr<double> Number(const Json& value, const std::string& pointer) const {
    EP_ASSIGN_OR_RETURN(const HardwareFieldRange range, RangeOf(pointer));
    const bool fraction = range.unit.empty();
    const std::string unit(range.unit);
    const std::string expected = fraction ? "a fraction in (0, 1]" : "a positive number of " + unit;
    if (!value.is_number()) return Error(pointer, "expected " + expected + ", found " + Found(value));
    const double number = value.get<double>();
    if (!std::isfinite(number)) {  // a YAML .inf or .nan (JSON has neither)
      return Error(pointer, "expected a finite number" + (fraction ? std::string(" in (0, 1]") : " of " + unit) +
                                ", found " + JsonForMessage(value));
    }
    if (!(number > 0) || (fraction && number > 1)) {
      return Error(pointer, "expected " + expected + ", found " + JsonForMessage(value));
    }
    EP_RETURN_IF_ERROR(InRange(range, number, pointer, JsonForMessage(value), fraction ? "a fraction of " : ""));
    return number;
  }

  /// An integer within its declared range (`what` names it in messages: "count of chips").
  StatusOr<int64_t> Integer(const Json& value, const std::string& pointer, std::string_view what) const {
    EP_ASSIGN_OR_RETURN(const HardwareFieldRange range, RangeOf(pointer));
    const std::string expected = "an integer " + std::string(what) + " of at least " + std::string(range.min_text);
    if (!value.is_number_integer() ||
        (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
      return Error(pointer, "expected " + expected + ", found " + Found(value));
    }
    const int64_t number = value.get<int64_t>();
    EP_RETURN_IF_ERROR(InRange(range, static_cast<double>(number), pointer, std::to_string(number),
                               "an integer " + std::string(what) + " of "));
    return number;
  }

  /// Bytes: a byte-size string ("95GiB", core/byte_size.h) or an integer; more than 0, within the
  /// declared range.
  StatusOr<int64_t> Bytes(const Json& value, const std::string& pointer) const {
    EP_ASSIGN_OR_RETURN(const HardwareFieldRange range, RangeOf(pointer));
    std::optional<int64_t> bytes;
    if (value.is_string()) {
      StatusOr<int64_t> parsed = ParseByteSize(value.get<std::string>(), pointer);
      if (!parsed.ok()) {
        return Error(pointer, "expected a byte size such as \"95GiB\" or \"80GB\", found " + JsonForMessage(value));
      }
      if (*parsed > 0) bytes = *parsed;
    } else if (value.is_number_integer() && !value.is_number_unsigned() && value.get<int64_t>() > 0) {
      bytes = value.get<int64_t>();
    } else if (value.is_number_unsigned() && value.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
      if (value.get<uint64_t>() > 0) bytes = static_cast<int64_t>(value.get<uint64_t>());
    }
    if (!bytes) {
      return Error(pointer, "expected a positive byte size such as \"95GiB\" (or an integer), found " + Found(value));
    }
    EP_RETURN_IF_ERROR(InRange(range, static_cast<double>(*bytes), pointer, JsonForMessage(value)));
    return *bytes;
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
      EP_ASSIGN_OR_RETURN(domain.chips, Integer(*chips, pointer + "/chips", "count of chips"));
    } else if (fast) {
      return Error(pointer, "missing key 'chips': expected the chips the fast links join (8 for an HGX node)");
    }
    if (auto torus = link->find("torus"); torus != link->end()) {
      const std::string torus_pointer = pointer + "/torus";
      if (!torus->is_array() || torus->empty()) {
        return Error(torus_pointer, "expected the torus dims as a list such as [16, 16, 16], found " + Found(*torus));
      }
      for (size_t i = 0; i < torus->size(); ++i) {
        EP_ASSIGN_OR_RETURN(int64_t dim, Integer((*torus)[i], PointerToElement(torus_pointer, i), "torus dim"));
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
      EP_ASSIGN_OR_RETURN(domain.nics_per_host, Integer(*nics, pointer + "/nics_per_host", "count of NICs"));
      EP_ASSIGN_OR_RETURN(domain.nic_bandwidth, Number(*nic_rate, pointer + "/nic_bandwidth"));
      domain.bandwidth =
          static_cast<double>(domain.nics_per_host) * domain.nic_bandwidth / static_cast<double>(chips_per_host);
      // The share per chip is what the step-time model divides by: it must be as plausible as a stated one.
      EP_ASSIGN_OR_RETURN(const HardwareFieldRange range, RangeOf(pointer + "/bandwidth"));
      EP_RETURN_IF_ERROR(InRange(range, domain.bandwidth, pointer + "/nic_bandwidth",
                                 fmt::format("{} x {:g} / {} = {:g}", domain.nics_per_host, domain.nic_bandwidth,
                                             chips_per_host, domain.bandwidth),
                                 "a network bandwidth per chip (nics_per_host x nic_bandwidth / chips_per_host) of "));
    } else {
      EP_ASSIGN_OR_RETURN(const Json* bandwidth,
                          Required(*link, pointer, "bandwidth", "bytes per second per chip and direction"));
      EP_ASSIGN_OR_RETURN(domain.bandwidth, Number(*bandwidth, pointer + "/bandwidth"));
    }
    EP_ASSIGN_OR_RETURN(const Json* latency, Required(*link, pointer, "latency", "seconds per ring step"));
    EP_ASSIGN_OR_RETURN(domain.latency, Number(*latency, pointer + "/latency"));
    if (auto base = link->find("base_latency"); base != link->end()) {
      EP_ASSIGN_OR_RETURN(domain.base_latency, Number(*base, pointer + "/base_latency"));
    }
    if (auto ll = link->find("low_latency"); ll != link->end()) {
      const std::string ll_pointer = pointer + "/low_latency";
      const std::string ll_what = "the low-latency protocol {base_latency, latency, bandwidth}";
      EP_RETURN_IF_ERROR(CheckMapping(*ll, ll_pointer, LowLatencyKeys(), ll_what));
      LinkDomain::LowLatency protocol;
      EP_ASSIGN_OR_RETURN(const Json* ll_base, Required(*ll, ll_pointer, "base_latency", "seconds"));
      EP_ASSIGN_OR_RETURN(protocol.base_latency, Number(*ll_base, ll_pointer + "/base_latency"));
      EP_ASSIGN_OR_RETURN(const Json* ll_step, Required(*ll, ll_pointer, "latency", "seconds per ring step"));
      EP_ASSIGN_OR_RETURN(protocol.latency, Number(*ll_step, ll_pointer + "/latency"));
      EP_ASSIGN_OR_RETURN(const Json* ll_bw, Required(*ll, ll_pointer, "bandwidth", "bytes per second per chip"));
      EP_ASSIGN_OR_RETURN(protocol.bandwidth, Number(*ll_bw, ll_pointer + "/bandwidth"));
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
      EP_ASSIGN_OR_RETURN(dims[i], Integer(value[i], PointerToElement(pointer, i), "dim"));
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
      EP_ASSIGN_OR_RETURN(tiling.units, Integer(*units, pointer + "/units", "count of SMs"));
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
  bool memory_only = false;
  if (root.is_object()) {
    if (auto flag = root.find("memory_only"); flag != root.end()) {
      if (!flag->is_boolean()) return reader.Error("/memory_only", "expected true or false");
      memory_only = flag->get<bool>();
    }
  }
  EP_RETURN_IF_ERROR(reader.CheckMapping(root, "", memory_only ? MemoryOnlyKeys() : TopKeys(),
                                         memory_only ? "a memory-only accelerator" : "a hardware profile"));
  HardwareProfile profile;
  profile.memory_only = memory_only;
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
  if (memory_only) {
    if (profile.description.empty())
      return reader.Error("/description", "a memory-only accelerator needs its description");
    if (auto profiles = root.find("profiles"); profiles != root.end()) {
      if (!profiles->is_array()) return reader.Error("/profiles", "expected a list of profile names");
      for (const Json& p : *profiles) {
        if (!p.is_string()) return reader.Error("/profiles", "expected a list of profile names");
        profile.profiles.push_back(p.get<std::string>());
      }
    }
    if (auto note = root.find("note"); note != root.end()) {
      if (!note->is_string()) return reader.Error("/note", "expected a string");
      profile.note = note->get<std::string>();
    }
    return profile;
  }
  EP_ASSIGN_OR_RETURN(const Json* hbm_bandwidth,
                      reader.Required(root, "", "hbm_bandwidth", "bytes per second, e.g. 2765e9"));
  EP_ASSIGN_OR_RETURN(profile.hbm_bandwidth, reader.Number(*hbm_bandwidth, "/hbm_bandwidth"));
  EP_ASSIGN_OR_RETURN(const Json* bf16,
                      reader.Required(root, "", "peak_flops_bf16", "dense FLOP per second, e.g. 459e12"));
  EP_ASSIGN_OR_RETURN(profile.peak_flops_bf16, reader.Number(*bf16, "/peak_flops_bf16"));
  if (auto fp8 = root.find("peak_flops_fp8"); fp8 != root.end()) {
    EP_ASSIGN_OR_RETURN(profile.peak_flops_fp8, reader.Number(*fp8, "/peak_flops_fp8"));
  }
  EP_ASSIGN_OR_RETURN(const Json* per_host,
                      reader.Required(root, "", "chips_per_host", "the chips one host drives (TPU 4 or 8, GPU 8)"));
  EP_ASSIGN_OR_RETURN(profile.chips_per_host, reader.Integer(*per_host, "/chips_per_host", "count of chips"));
  EP_ASSIGN_OR_RETURN(profile.fast, reader.Link(root, "fast", /*fast=*/true, profile.chips_per_host));
  EP_ASSIGN_OR_RETURN(profile.network, reader.Link(root, "network", /*fast=*/false, profile.chips_per_host));
  EP_ASSIGN_OR_RETURN(const Json* efficiency,
                      reader.Required(root, "", "efficiency", "the achievable fractions {matmul, link, hbm}"));
  EP_RETURN_IF_ERROR(reader.CheckMapping(*efficiency, "/efficiency", EfficiencyKeys(), "the efficiencies"));
  for (const auto& [key, field] : {std::pair<std::string, double*>{"matmul", &profile.matmul_efficiency},
                                   std::pair<std::string, double*>{"link", &profile.link_efficiency},
                                   std::pair<std::string, double*>{"hbm", &profile.hbm_efficiency}}) {
    EP_ASSIGN_OR_RETURN(const Json* value, reader.Required(*efficiency, "/efficiency", key, "a fraction in (0, 1]"));
    EP_ASSIGN_OR_RETURN(*field, reader.Number(*value, "/efficiency/" + key));
  }
  if (auto network = efficiency->find("network"); network != efficiency->end()) {
    EP_ASSIGN_OR_RETURN(profile.network_efficiency, reader.Number(*network, "/efficiency/network"));
  }
  if (auto attention = efficiency->find("attention"); attention != efficiency->end()) {
    EP_ASSIGN_OR_RETURN(profile.attention_efficiency, reader.Number(*attention, "/efficiency/attention"));
  }
  if (auto tiling = efficiency->find("matmul_tiling"); tiling != efficiency->end()) {
    EP_ASSIGN_OR_RETURN(profile.matmul_tiling, reader.Tiling(*tiling, "/efficiency/matmul_tiling"));
  }
  return profile;
}

}  // namespace easyplan::step
