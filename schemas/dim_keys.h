#ifndef EASYPLAN_SCHEMAS_DIM_KEYS_H_
#define EASYPLAN_SCHEMAS_DIM_KEYS_H_

// The canonical dims schemas::ModelDims reads (the expert count, the norm epsilon, ...) and, as data, the
// HuggingFace config keys each one is read from: schemas/dims.yaml holds the shared spellings, in order
// (the first key present counts), and a family's `dims:` names its own (docs/SCHEMAS.md, "Dim keys").
// The C++ knows a dim only by its canonical name and the kind of value it holds; which key a config
// spells it with is data, so a family whose config names a dim otherwise needs no C++.

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/document.h"
#include "core/json.h"
#include "core/status.h"

namespace easyplan::schemas {

/// A canonical dim: one per value ModelDims reads from a config key.
enum class Dim {
  kModelType,
  // the transformer
  kHidden,
  kLayers,
  kHeads,
  kKvHeads,
  kHeadDim,
  kIntermediate,
  kVocab,
  kMaxPositions,
  kGatedMlp,
  kTiedEmbeddings,
  kNormEps,
  kRopeTheta,
  kTorchDtype,
  // attention windows and variants
  kSlidingWindow,
  kUseSlidingWindow,
  kLayerTypes,
  kAttentionChunkSize,
  kAttentionSinks,
  kPartialRotaryFactor,
  kUseQkNorm,
  kNoRopeLayers,
  kSwigluLimit,
  // linear attention
  kLinearKeyHeads,
  kLinearValueHeads,
  kLinearKeyDim,
  kLinearValueDim,
  kLinearConvKernel,
  // mixture of experts
  kExperts,
  kTopK,
  kMoeIntermediate,
  kSharedExperts,
  kSharedIntermediate,
  kFirstDenseLayers,
  kMlpLayerTypes,
  kNormTopkProb,
  kNGroup,
  kTopkGroup,
  kRoutedScaling,
  kRouterJitterNoise,
  // multi-head latent attention
  kQLoraRank,
  kKvLoraRank,
  kQkNopeHeadDim,
  kQkRopeHeadDim,
  kVHeadDim,
  kCount,  // not a dim: how many there are
};
inline constexpr size_t kDimCount = static_cast<size_t>(Dim::kCount);

/// What a dim's keys hold, which says how the keys are read (schemas/model_dims.cc) and whether the dim
/// has a default in schemas/dims.yaml (numbers and booleans do; a size is 0 when absent, a string "").
enum class DimKind {
  kSize,     ///< a positive integer (else 0); every present key must be an integer, the first positive counts
  kInt,      ///< an integer, possibly absent
  kNumber,   ///< a number, else the default
  kBool,     ///< true or false, else the default
  kString,   ///< a string, else ""
  kStrings,  ///< a list of strings, else empty
  kInts,     ///< a list of integers, else empty
  kPresent,  ///< whether any of the keys is present (even as null)
};

/// The canonical name of `dim` ("experts"), as schemas/dims.yaml and a family's `dims:` spell it.
std::string_view DimName(Dim dim);
DimKind DimKindOf(Dim dim);
/// The dim named `name`, or nullopt.
std::optional<Dim> DimNamed(std::string_view name);
/// Every canonical name, in Dim order (for "did you mean" and "expected one of").
std::vector<std::string> DimNames();

/// Which keys each dim is read from, in order, and the default of a number or bool dim.
class DimKeys {
 public:
  const std::vector<std::string>& Keys(Dim dim) const { return keys_[static_cast<size_t>(dim)]; }
  /// The default of a kNumber or kBool dim (null for the other kinds).
  const Json& Default(Dim dim) const { return defaults_[static_cast<size_t>(dim)]; }

  void SetKeys(Dim dim, std::vector<std::string> keys) { keys_[static_cast<size_t>(dim)] = std::move(keys); }
  void SetDefault(Dim dim, Json value) { defaults_[static_cast<size_t>(dim)] = std::move(value); }

 private:
  std::array<std::vector<std::string>, kDimCount> keys_;
  std::array<Json, kDimCount> defaults_;
};

/// A family's `dims:` block: the dims it spells its own way, in file order.
using DimKeyOverrides = std::vector<std::pair<Dim, std::vector<std::string>>>;

/// Each config object's keys (ResolvedConfig::dim_keys): JSON pointer ("" or "/text_config") -> keys.
using DimKeysByObject = std::map<std::string, DimKeys>;

/// schemas/dims.yaml: `dims: {NAME: {keys: [KEY, ...], default: VALUE, doc: ...}}`, every canonical dim
/// once, `default` given for number and bool dims only. Errors name the file, line and key.
StatusOr<DimKeys> ParseDimKeys(const Document& doc);

/// A family's `dims:` (`NAME: [KEY, ...]`) at `pointer` of `doc`: an unknown canonical name is an error
/// naming the file, the line and the name, with a did-you-mean.
StatusOr<DimKeyOverrides> ParseDimKeyOverrides(const Document& doc, const Json& block, const std::string& pointer);

/// `shared` with `overrides` applied in order, the first entry for a dim winning (a family's own, listed
/// before those it inherits).
DimKeys WithOverrides(const DimKeys& shared, const std::vector<const DimKeyOverrides*>& overrides);

/// The schemas/dims.yaml compiled into the binary, parsed on first use: the keys of a config read
/// without a family (a config given as JSON to schemas::ModelDimsOf, a --schemas-dir without the file).
StatusOr<const DimKeys*> BuiltinDimKeys();

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_DIM_KEYS_H_
