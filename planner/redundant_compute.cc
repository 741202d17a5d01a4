#include "planner/redundant_compute.h"

#include <fmt/format.h>

#include <algorithm>

#include "planner/pipeline.h"

namespace easyplan::planner {
namespace {

void AddAxes(const Json& value, std::set<std::string>* out) {
  if (value.is_string()) out->insert(value.get<std::string>());
  if (value.is_array()) {
    for (const Json& item : value) AddAxes(item, out);
  }
}

bool IsSeparator(char c) { return c == '/' || c == '.'; }

/// The layer number of a name component of one to nine digits, or -1.
int64_t LayerNumber(std::string_view part) {
  if (part.empty() || part.size() > 9) return -1;
  int64_t value = 0;
  for (char c : part) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

void SortUnique(std::vector<int64_t>& values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

}  // namespace

RedundantComputeCheck::RedundantComputeCheck(const Mesh& mesh, const Json& config) : mesh_(mesh) {
  const auto axes = config.find("partition_axis");
  if (axes != config.end() && axes->is_object()) {
    for (const char* key : {"batch_axis", "sequence_axis"}) {
      if (auto it = axes->find(key); it != axes->end()) AddAxes(*it, &data_axes_);
    }
  }
  if (data_axes_.empty()) data_axes_ = {"dp", "fsdp", "sp"};  // EasyDeL's PartitionAxis defaults
  for (int a = 0; a < mesh_.rank(); ++a) {
    // The pipeline axis splits the layers between stages, not a module's computation.
    const std::string& name = mesh_.axis_names[static_cast<size_t>(a)];
    if (mesh_.shape[static_cast<size_t>(a)] <= 1 || data_axes_.count(name) || name == kPipelineAxis) continue;
    all_candidates_ |= uint64_t{1} << candidates_.size();
    candidates_.push_back(a);
  }
}

RedundantComputeCheck::Weight RedundantComputeCheck::Classify(const Shape& shape, const PartitionSpec& effective,
                                                              bool per_expert) const {
  Weight weight;
  if (shape.rank() < 2 || candidates_.empty()) return weight;
  weight.counts = true;
  weight.per_expert = per_expert;
  for (const PartitionSpec::Entry& entry : effective.entries()) {
    for (const std::string& axis : entry) {
      for (size_t k = 0; k < candidates_.size(); ++k) {
        if (mesh_.axis_names[static_cast<size_t>(candidates_[k])] == axis) weight.axes |= uint64_t{1} << k;
      }
    }
  }
  return weight;
}

void RedundantComputeCheck::Add(std::string_view name, const Weight& weight) {
  if (!weight.counts) return;
  // "model/layers/3/self_attn/q_proj/kernel" -> module "self_attn" of layer 3 (HF names use '.'): the
  // first component of one to nine digits, when two more components follow it.
  int64_t layer = -1;
  size_t start = 0;
  while (true) {
    size_t end = start;
    while (end < name.size() && !IsSeparator(name[end])) ++end;
    if (end == name.size()) return;  // the last component: no numbered layer with a module below it
    layer = LayerNumber(name.substr(start, end - start));
    start = end + 1;
    if (layer >= 0) break;
  }
  size_t module_end = start;
  while (module_end < name.size() && !IsSeparator(name[module_end])) ++module_end;
  if (module_end == name.size()) return;
  const std::string_view module_name = name.substr(start, module_end - start);

  // Tensors come layer by layer and module by module (DeepSeek-V3: 1,536 expert tensors of one mlp in a
  // row), so the last module found is tried before the hash table.
  if (last_module_ >= modules_.size() || modules_[last_module_].name != module_name) {
    if (const size_t* found = module_index_.Find(module_name)) {
      last_module_ = *found;
    } else {
      last_module_ = modules_.size();
      modules_.push_back(Module{.name = std::string(module_name)});
      module_index_.Insert(std::string(module_name), last_module_);
    }
  }
  Module& module = modules_[last_module_];
  if (module.per_expert || module.axes == all_candidates_) return;  // never reported: its layers do not matter
  module.per_expert = weight.per_expert;
  module.axes |= weight.axes;
  if (module.per_expert || module.axes == all_candidates_) {
    module.layers = {};
    return;
  }
  if (!module.layers.empty() && module.layers.back() == layer) return;
  module.layers.push_back(layer);
  if (module.layers.size() >= 2 * std::max<size_t>(module.compacted, 64)) {
    SortUnique(module.layers);
    module.compacted = module.layers.size();
  }
}

std::vector<Finding> RedundantComputeCheck::Findings() const {
  std::vector<Finding> out;
  for (size_t k = 0; k < candidates_.size(); ++k) {
    const std::string& axis = mesh_.axis_names[static_cast<size_t>(candidates_[k])];
    const int64_t size = mesh_.shape[static_cast<size_t>(candidates_[k])];
    std::vector<std::string> idle;
    std::vector<int64_t> layers;
    for (const Module& module : modules_) {
      if ((module.axes >> k & 1) != 0 || module.per_expert) continue;
      idle.push_back(module.name);
      layers.insert(layers.end(), module.layers.begin(), module.layers.end());
    }
    if (idle.empty()) continue;
    std::sort(idle.begin(), idle.end());
    SortUnique(layers);
    Finding finding;
    finding.code = FindingCode::kRedundantCompute;
    finding.message = fmt::format(
        "{}={} shards neither the batch nor the sequence nor any weight of {} ({} layer{}): each of its {} devices "
        "computes them whole, {} times over",
        axis, size, fmt::join(idle, ", "), layers.size(), layers.size() == 1 ? "" : "s", size, size);
    finding.notes.push_back(fmt::format(
        "the batch and sequence axes are {} (partition_axis batch_axis, sequence_axis); give these devices to one "
        "of them, or shard those weights over '{}'",
        fmt::join(data_axes_, ", "), axis));
    out.push_back(std::move(finding));
  }
  return out;
}

}  // namespace easyplan::planner
