#include "planner/layout_links.h"

#include <string>
#include <unordered_map>

#include "schemas/layout_convert.h"

namespace easyplan::planner {
namespace {

std::string ExpertName(const std::string& pattern, int64_t expert) {
  std::string name = pattern;
  const size_t at = name.find(schemas::kExpertPlaceholder);
  if (at != std::string::npos) name.replace(at, schemas::kExpertPlaceholder.size(), std::to_string(expert));
  return name;
}

}  // namespace

PartitionSpec MapSpecThroughLink(const PartitionSpec& rule_spec, const std::vector<int>& dim_of) {
  std::vector<PartitionSpec::Entry> entries;
  entries.reserve(dim_of.size());
  for (int source : dim_of) {
    entries.push_back(source < rule_spec.size() ? rule_spec[source] : PartitionSpec::Entry{});
  }
  // Trailing None entries carry no information; keep the mapped spec as short as the rule's.
  while (!entries.empty() && entries.back().empty() && static_cast<int>(entries.size()) > rule_spec.size()) {
    entries.pop_back();
  }
  return PartitionSpec(std::move(entries));
}

StatusOr<std::vector<LayoutLink>> LinkHfToEasyDel(const ParamTree& tree,
                                                  const std::vector<schemas::ExpandedTensor>& expanded) {
  if (tree.layout != Layout::kHf) {
    return Status::BadInput({},
                            "rules written for EasyDeL names can be carried onto an HF-layout tree only; this "
                            "tree is already in the EasyDeL layout");
  }
  // HF name -> (expanded tensor, expert index); per-expert names are spelled out once per expert.
  std::unordered_map<std::string, std::pair<const schemas::ExpandedTensor*, int64_t>> by_name;
  for (const schemas::ExpandedTensor& tensor : expanded) {
    // Keyed by HF name from the EasyDeL side: an FP8 weight is split into an HF-only FP8 tensor and an
    // EasyDeL-only dequantized one that share the HF name.
    if (!tensor.in_easydel) continue;
    if (tensor.experts > 0) {
      for (int64_t e = 0; e < tensor.experts; ++e)
        by_name.emplace(ExpertName(tensor.hf_name, e), std::pair{&tensor, e});
    } else {
      by_name.emplace(tensor.hf_name, std::pair{&tensor, int64_t{-1}});
    }
  }
  // HF-only tensors linked to an EasyDeL-only one (`easydel_link:`): that tensor's rule, dim for dim.
  std::unordered_map<std::string, const schemas::ExpandedTensor*> linked;
  for (const schemas::ExpandedTensor& tensor : expanded) {
    if (tensor.in_easydel || tensor.easydel_link.empty()) continue;
    auto target = by_name.find(tensor.easydel_link);
    if (target == by_name.end() || target->second.first->in_hf) {
      return Status::BadInput({tensor.loc}, "easydel_link of '" + tensor.hf_name + "' names '" + tensor.easydel_link +
                                                "', which is not an EasyDeL-only tensor of the template");
    }
    linked.emplace(tensor.hf_name, target->second.first);
  }
  std::vector<LayoutLink> links;
  links.reserve(tree.tensors.size());
  for (const TensorEntry& entry : tree.tensors) {
    LayoutLink link;
    if (auto target = linked.find(entry.name); target != linked.end()) {
      link.rule_name = target->second->easydel_name;
      link.rule_shape = entry.shape;  // the fused tensor's own dims: each is the target's, wider or not
      for (int k = 0; k < entry.shape.rank(); ++k) link.dim_of.push_back(k);
      links.push_back(std::move(link));
      continue;
    }
    auto it = by_name.find(entry.name);
    if (it == by_name.end()) {
      link.has_counterpart = false;
      links.push_back(std::move(link));
      continue;
    }
    const schemas::ExpandedTensor& source = *it->second.first;
    const bool stacked = source.experts > 0;
    link.rule_name = source.easydel_name;
    link.rule_shape = source.easydel_shape;
    link.dim_of = schemas::HfDimsInEasyDel(entry.shape.rank(), source.easydel_name.ends_with("kernel"), stacked);
    if (stacked) {
      link.expert_dim = 0;
      link.expert = it->second.second;
    }
    // A checkpoint whose shape disagrees with the template cannot borrow the template's spec safely.
    bool consistent = static_cast<int>(link.dim_of.size()) == entry.shape.rank();
    for (int k = 0; consistent && k < entry.shape.rank(); ++k) {
      const int d = link.dim_of[static_cast<size_t>(k)];
      consistent = d < link.rule_shape.rank() && link.rule_shape[d] == entry.shape[k];
    }
    if (!consistent) {
      return Status::BadInput({},
                              entry.name + " has shape " + entry.shape.ToString() +
                                  ", but the template built from "
                                  "the config expects " +
                                  source.hf_shape.ToString(),
                              {"run `easyplan tree CONFIG --from CHECKPOINT --diff` to see every difference"});
    }
    links.push_back(std::move(link));
  }
  return links;
}

}  // namespace easyplan::planner
