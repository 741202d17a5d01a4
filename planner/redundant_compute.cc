#include "planner/redundant_compute.h"

#include <fmt/format.h>

#include <cctype>

namespace easyplan::planner {
namespace {

void AddAxes(const Json& value, std::set<std::string>* out) {
  if (value.is_string()) out->insert(value.get<std::string>());
  if (value.is_array()) {
    for (const Json& item : value) AddAxes(item, out);
  }
}

bool AllDigits(const std::string& s) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
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
}

void RedundantComputeCheck::Add(const std::string& name, const Shape& shape, const PartitionSpec& effective,
                                bool per_expert) {
  if (shape.rank() < 2) return;
  // "model/layers/3/self_attn/q_proj/kernel" -> module "self_attn" of layer 3 (HF names use '.').
  std::vector<std::string> parts;
  std::string part;
  for (char c : name) {
    if (c == '/' || c == '.') {
      parts.push_back(std::move(part));
      part.clear();
    } else {
      part += c;
    }
  }
  parts.push_back(std::move(part));
  for (size_t i = 0; i + 2 < parts.size(); ++i) {
    if (!AllDigits(parts[i])) continue;
    Module& module = modules_[parts[i + 1]];
    module.layers.insert(std::stoll(parts[i]));
    module.per_expert = module.per_expert || per_expert;
    for (const PartitionSpec::Entry& entry : effective.entries()) module.axes.insert(entry.begin(), entry.end());
    return;
  }
}

std::vector<Finding> RedundantComputeCheck::Findings() const {
  std::vector<Finding> out;
  for (size_t a = 0; a < mesh_.axis_names.size(); ++a) {
    const std::string& axis = mesh_.axis_names[a];
    const int64_t size = mesh_.shape[a];
    if (size <= 1 || data_axes_.count(axis)) continue;
    std::vector<std::string> idle;
    std::set<int64_t> layers;
    for (const auto& [name, module] : modules_) {
      if (module.axes.count(axis) || module.per_expert) continue;
      idle.push_back(name);
      layers.insert(module.layers.begin(), module.layers.end());
    }
    if (idle.empty()) continue;
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
