#include "planner/logical_check.h"

#include <fmt/format.h>

#include <algorithm>

namespace easyplan::planner {

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d <= n / d; ++d) {
    if (n % d != 0) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

std::string NearestDivisorsText(int64_t n, int64_t asked, size_t per_side) {
  const std::vector<int64_t> all = Divisors(n);
  if (all.size() <= 2 * per_side + 2) return fmt::format("{}", fmt::join(all, ", "));
  const size_t split = static_cast<size_t>(std::lower_bound(all.begin(), all.end(), asked) - all.begin());
  const size_t first = split > per_side ? split - per_side : 0;
  const size_t last = std::min(all.size(), split + per_side);
  std::vector<int64_t> shown(all.begin() + static_cast<std::ptrdiff_t>(first),
                             all.begin() + static_cast<std::ptrdiff_t>(last));
  return fmt::format("{}{}{} ({} sizes divide {})", first > 0 ? "..., " : "", fmt::join(shown, ", "),
                     last < all.size() ? ", ..." : "", all.size(), n);
}

std::vector<std::string> ComputeAxes(const Json& config) {
  std::vector<std::string> out = {"tp", "ep"};
  const auto axes = config.find("partition_axis");
  if (axes == config.end() || !axes->is_object()) return out;
  const char* keys[] = {"tensor_parallel_axis", "expert_parallel_axis"};
  for (size_t i = 0; i < 2; ++i) {
    if (auto it = axes->find(keys[i]); it != axes->end() && it->is_string()) out[i] = it->get<std::string>();
  }
  return out;
}

PartitionSpec CountedSpec(const PartitionSpec& written, const PartitionSpec& laid_out,
                          const std::vector<std::string>& compute_axes) {
  std::vector<PartitionSpec::Entry> entries;
  for (int d = 0; d < written.size(); ++d) {
    const bool kept = d < laid_out.size() && !laid_out[d].empty();
    PartitionSpec::Entry entry;
    for (const std::string& axis : written[d]) {
      if (kept || std::find(compute_axes.begin(), compute_axes.end(), axis) != compute_axes.end()) {
        entry.push_back(axis);
      }
    }
    entries.push_back(std::move(entry));
  }
  return PartitionSpec(std::move(entries));
}

std::optional<Finding> CheckLogicalDim(const rules::LogicalDims& dims, std::string_view rule_name,
                                       const std::string& tensor_name, const Shape& shape, const PartitionSpec& spec,
                                       const Mesh& mesh, const Json& config, int* dim_out,
                                       const std::vector<int>* dim_of) {
  // Most tensors shard nothing a count could disagree with: skip the name lookup for them.
  bool sharded = false;
  for (const PartitionSpec::Entry& entry : spec.entries()) {
    for (const std::string& axis : entry) {
      const std::optional<int> index = mesh.AxisIndex(axis);
      sharded = sharded || (index && mesh.shape[static_cast<size_t>(*index)] > 1);
    }
  }
  if (!sharded) return std::nullopt;
  const rules::LogicalDim* logical = dims.Find(rule_name);
  if (!logical) return std::nullopt;
  const int rule_dim = logical->dim < 0 ? shape.rank() + logical->dim : logical->dim;
  if (rule_dim < 0 || rule_dim >= shape.rank()) return std::nullopt;
  int dim = rule_dim;  // the tensor's own dim holding it
  if (dim_of != nullptr) {
    auto it = std::find(dim_of->begin(), dim_of->end(), rule_dim);
    if (it == dim_of->end()) return std::nullopt;
    dim = static_cast<int>(it - dim_of->begin());
  }
  if (dim >= spec.size()) return std::nullopt;
  const std::optional<int64_t> count = rules::LogicalDims::Count(*logical, config);
  if (!count || *count <= 0) return std::nullopt;
  // The entry's axes that exist in the mesh (unknown axes are their own finding).
  std::vector<std::pair<std::string, int64_t>> axes;
  int64_t product = 1;
  for (const std::string& axis : spec[dim]) {
    const std::optional<int> index = mesh.AxisIndex(axis);
    if (!index) continue;
    const int64_t size = mesh.shape[static_cast<size_t>(*index)];
    axes.emplace_back(axis, size);
    if (__builtin_mul_overflow(product, size, &product)) return std::nullopt;
  }
  if (product <= 1 || *count % product == 0) return std::nullopt;

  std::vector<std::string> sizes;
  for (const auto& [axis, size] : axes) sizes.push_back(fmt::format("{}={}", axis, size));
  Finding finding;
  finding.code = FindingCode::kLogicalIndivisible;
  std::string key = logical->count_keys.front();
  for (const std::string& candidate : logical->count_keys) {
    if (auto it = config.find(candidate); it != config.end() && it->is_number_integer()) {
      key = candidate;
      break;
    }
  }
  const std::string by = axes.size() == 1 ? sizes.front() : fmt::format("{} = {}", fmt::join(sizes, " x "), product);
  finding.message = fmt::format("{}: dim {} holds {} {} ({}), which {} does not divide", tensor_name, dim, *count,
                                logical->what, key, by);
  finding.tensor = tensor_name;
  finding.count = 1;
  for (const auto& [axis, size] : axes) {
    if (size <= 1) continue;
    const int64_t others = product / size;
    if (*count % others != 0) {
      finding.notes.push_back(fmt::format("no size of '{}' works while the entry's other axes give {}", axis, others));
      continue;
    }
    finding.notes.push_back(
        fmt::format("valid sizes for '{}' here: {}", axis, NearestDivisorsText(*count / others, size)));
  }
  if (key == "vocab_size") {
    // A vocabulary can grow: checkpoints pad it to a round multiple (GPT-2's 50,257 to 50,304 in nanoGPT).
    const int64_t padded = (*count / product + 1) * product;
    finding.notes.push_back(
        fmt::format("or pad the vocabulary to a multiple of {}: --set vocab_size={}", product, padded));
  }
  if (dim_out) *dim_out = dim;
  return finding;
}

}  // namespace easyplan::planner
