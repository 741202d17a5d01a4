#include "schemas/layout_convert.h"

#include <algorithm>
#include <array>

namespace easyplan::schemas {
namespace {

// HF -> EasyDeL permutations of a `.weight` by rank (index = rank); the inverse table undoes them.
constexpr std::array<std::array<int, 6>, 7> kForward = {{
    {},
    {0},
    {1, 0},
    {2, 1, 0},
    {2, 3, 1, 0},
    {2, 3, 4, 1, 0},
    {4, 5, 3, 2, 1, 0},
}};
constexpr std::array<std::array<int, 6>, 7> kBackward = {{
    {},
    {0},
    {1, 0},
    {2, 1, 0},
    {3, 2, 0, 1},
    {4, 3, 0, 1, 2},
    {5, 4, 3, 2, 0, 1},
}};
constexpr int kStackedExperts[] = {0, 2, 1};

bool EndsWith(std::string_view text, std::string_view suffix) { return text.ends_with(suffix); }

std::string ReplaceSuffix(std::string_view text, std::string_view from, std::string_view to) {
  return std::string(text.substr(0, text.size() - from.size())) + std::string(to);
}

std::string DotsToSlashes(std::string text) {
  for (char& c : text) {
    if (c == '.') c = '/';
  }
  return text;
}

std::string SlashesToDots(std::string text) {
  for (char& c : text) {
    if (c == '/') c = '.';
  }
  return text;
}

Shape Permute(const Shape& shape, const std::array<std::array<int, 6>, 7>& table) {
  if (shape.rank() < 2 || shape.rank() > 6) return shape;
  return shape.Permuted(
      std::span<const int>(table[static_cast<size_t>(shape.rank())].data(), static_cast<size_t>(shape.rank())));
}

// "a.experts.{expert}.w1.weight" -> "a.experts.w1.weight".
std::string DropExpertComponent(std::string_view name) {
  std::string text(name);
  std::string component = "." + std::string(kExpertPlaceholder);
  if (size_t pos = text.find(component); pos != std::string::npos) text.erase(pos, component.size());
  return text;
}

}  // namespace

NamedShape HfToEasyDel(std::string_view hf_name, const Shape& hf_shape, TensorKind kind, int64_t experts) {
  std::string name = experts > 0 ? DropExpertComponent(hf_name) : std::string(hf_name);
  Shape shape = hf_shape;
  if (experts > 0) {
    std::vector<int64_t> dims = {experts};
    dims.insert(dims.end(), hf_shape.dims().begin(), hf_shape.dims().end());
    shape = Shape(std::move(dims));
  }
  if (EndsWith(name, ".weight")) {
    if (kind == TensorKind::kEmbedding) {
      name = ReplaceSuffix(name, ".weight", ".embedding");
    } else if (kind == TensorKind::kLayerNorm) {
      name = ReplaceSuffix(name, ".weight", ".scale");
    } else {
      name = ReplaceSuffix(name, ".weight", ".kernel");
      shape = experts > 0 && shape.rank() == 3 ? shape.Permuted(kStackedExperts) : Permute(shape, kForward);
    }
  }
  return {DotsToSlashes(std::move(name)), std::move(shape)};
}

std::vector<NamedShape> EasyDelToHf(std::string_view easydel_path, const Shape& shape, int64_t experts) {
  std::string name = SlashesToDots(std::string(easydel_path));
  Shape hf_shape = shape;
  if (EndsWith(name, ".kernel")) {
    name = ReplaceSuffix(name, ".kernel", ".weight");
    hf_shape = experts > 0 && shape.rank() == 3 ? shape.Permuted(kStackedExperts) : Permute(shape, kBackward);
  } else if (EndsWith(name, ".embedding")) {
    name = ReplaceSuffix(name, ".embedding", ".weight");
  } else if (EndsWith(name, ".scale")) {
    name = ReplaceSuffix(name, ".scale", ".weight");
  }
  if (experts <= 0) return {{std::move(name), std::move(hf_shape)}};
  // Unstack: "<block>.experts.<linear>.weight" [E, ...] -> "<block>.experts.<e>.<linear>.weight" [...].
  std::vector<int64_t> one(hf_shape.dims().begin() + 1, hf_shape.dims().end());
  size_t at = name.rfind(".experts.");
  std::vector<NamedShape> out;
  out.reserve(static_cast<size_t>(experts));
  for (int64_t e = 0; e < experts; ++e) {
    std::string expert_name =
        at == std::string::npos ? name : name.substr(0, at + 9) + std::to_string(e) + "." + name.substr(at + 9);
    out.push_back({std::move(expert_name), Shape(one)});
  }
  return out;
}

std::vector<int> HfDimsInEasyDel(int hf_rank, bool kernel, bool stacked_experts) {
  std::vector<int> dims(static_cast<size_t>(std::max(hf_rank, 0)));
  if (stacked_experts) {
    // stack [E, d0, d1, ...] (HF dim k at stack dim k + 1), then the (0, 2, 1) swap for 2-D kernels.
    for (int k = 0; k < hf_rank; ++k) dims[static_cast<size_t>(k)] = k + 1;
    if (kernel && hf_rank == 2) dims = {2, 1};
    return dims;
  }
  for (int k = 0; k < hf_rank; ++k) dims[static_cast<size_t>(k)] = k;
  if (!kernel || hf_rank < 2 || hf_rank > 6) return dims;
  // EasyDeL dim j holds HF dim kForward[j]: invert.
  for (int j = 0; j < hf_rank; ++j) {
    dims[static_cast<size_t>(kForward[static_cast<size_t>(hf_rank)][static_cast<size_t>(j)])] = j;
  }
  return dims;
}

}  // namespace easyplan::schemas
