#include "planner/export_tp_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "core/emit.h"

namespace easyplan::planner {
namespace {

constexpr std::string_view kBasePrefix = "model.";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string LastComponent(const std::string& path) {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

bool IsEmbedding(const std::string& module) {
  const std::string last = LastComponent(module);
  return last.find("embed") != std::string::npos || last == "wte" || last == "wpe";
}

// Where tp shards one tensor.
struct TpUse {
  std::optional<int> dim;  // the dim tp shards, if any
  std::string problem;     // non-empty: tp shards it in a way no style reproduces
};

TpUse FindTpUse(const TpTensor& tensor, const Mesh& mesh, const std::string& tp_axis) {
  TpUse use;
  for (int d = 0; d < tensor.spec.size(); ++d) {
    const PartitionSpec::Entry& entry = tensor.spec[d];
    std::optional<std::string> major;  // first axis of size > 1
    bool has_tp = false;
    for (const std::string& axis : entry) {
      std::optional<int> k = mesh.AxisIndex(axis);
      if (!k || mesh.shape[static_cast<size_t>(*k)] == 1) continue;
      if (!major) major = axis;
      has_tp |= axis == tp_axis;
    }
    if (!has_tp) continue;
    use.dim = d;
    if (*major != tp_axis) {
      std::string repr = PartitionSpec({entry}).ToString();
      use.problem = fmt::format(
          "dim {} is sharded by {} with '{}' major, so a {} rank's slice is not one contiguous block as "
          "transformers' styles cut it",
          d, repr.substr(2, repr.size() - 3), *major, tp_axis);
    }
  }
  return use;
}

struct Module {
  std::string name;
  bool has_weight = false;
  int weight_rank = 0;
  TpUse weight;
  bool has_bias = false;
  TpUse bias;
  std::string bias_name;
  std::vector<std::pair<std::string, std::string>> other_problems;  // (param name, reason)
};

}  // namespace

std::string ReplaceLayerNumberByWildcard(std::string_view name) {
  // re.sub(r"\.\d+(\.|$)", lambda m: ".*" + m.group(1), name): left to right, no overlap.
  std::string out;
  size_t i = 0;
  while (i < name.size()) {
    if (name[i] == '.' && i + 1 < name.size() && IsDigit(name[i + 1])) {
      size_t j = i + 1;
      while (j < name.size() && IsDigit(name[j])) ++j;
      if (j == name.size()) {
        out += ".*";
        i = j;
        continue;
      }
      if (name[j] == '.') {
        out += ".*.";
        i = j + 1;
        continue;
      }
    }
    out += name[i++];
  }
  return out;
}

namespace {

// ---- The steps of DeriveTpPlan ------------------------------------------------------------------------

/// What DeriveTpPlan has gathered and decided so far.
struct TpDerivation {
  std::vector<Module> modules;      ///< in first-appearance order
  std::vector<std::string> styles;  ///< per module; "" = not sharded by tp, no entry needed
  /// (param name, reason) of everything no style reproduces, in the order found; grouped at the end.
  std::vector<std::pair<std::string, std::string>> unmapped;
};

// Step 1: each tensor's axes other than tp, per generic parameter name; then, when tp shards anything,
// the tensor into its module (weight, bias or another parameter), or into `unmapped` when it cannot
// have a style.
void CollectModules(const std::vector<TpTensor>& tensors, const Mesh& mesh, TpPlanExport& out, TpDerivation& d) {
  std::map<std::string, size_t> module_index;
  std::map<std::string, size_t> other_index;
  for (const TpTensor& tensor : tensors) {
    std::vector<std::string> others;
    for (const std::string& axis : tensor.spec.AllAxes()) {
      std::optional<int> k = mesh.AxisIndex(axis);
      if (axis != out.tp_axis && k && mesh.shape[static_cast<size_t>(*k)] > 1) others.push_back(axis);
    }
    if (!others.empty()) {
      const std::string generic = ReplaceLayerNumberByWildcard(tensor.name);
      auto [it, inserted] = other_index.emplace(generic, out.other_axes.size());
      if (inserted) out.other_axes.push_back(TpOtherAxes{generic, others, 0});
      ++out.other_axes[it->second].tensors;
    }
    if (out.tp_size <= 1) continue;
    if (!tensor.refused.empty()) {
      d.unmapped.emplace_back(tensor.name, tensor.refused);
      continue;
    }
    if (!tensor.in_model) {
      d.unmapped.emplace_back(tensor.name,
                              "only in the checkpoint layout, with no counterpart among the tensors the rules "
                              "describe (an FP8 scale, an MTP layer): the plan replicates it and gives it no style");
      continue;
    }

    const size_t dot = tensor.name.rfind('.');
    const std::string module_name = dot == std::string::npos ? "" : tensor.name.substr(0, dot);
    const std::string param = dot == std::string::npos ? tensor.name : tensor.name.substr(dot + 1);
    auto [it, inserted] = module_index.emplace(module_name, d.modules.size());
    if (inserted) d.modules.push_back(Module{module_name});
    Module& module = d.modules[it->second];
    const TpUse use = FindTpUse(tensor, mesh, out.tp_axis);
    if (param == "weight") {
      module.has_weight = true;
      module.weight_rank = tensor.shape.rank();
      module.weight = use;
    } else if (param == "bias") {
      module.has_bias = true;
      module.bias = use;
      module.bias_name = tensor.name;
    } else if (use.dim) {
      module.other_problems.emplace_back(
          tensor.name, use.problem.empty()
                           ? fmt::format("'{}' is sharded by {} on dim {}; transformers' styles only shard "
                                         "`weight` and `bias` parameters",
                                         param, out.tp_axis, *use.dim)
                           : use.problem);
    }
  }
}

// Step 2: each module's style from where tp shards its weight (embeddings: the vocabulary dim is
// embedding_rowwise); a module's other parameters and a weight no style shards go to `unmapped`.
void AssignStyles(const std::string& tp_axis, TpDerivation& d) {
  d.styles.assign(d.modules.size(), "");
  for (size_t m = 0; m < d.modules.size(); ++m) {
    Module& module = d.modules[m];
    for (const auto& problem : module.other_problems) d.unmapped.push_back(problem);
    const std::string weight_name = module.name + ".weight";
    if (module.has_weight && module.weight.dim) {
      if (!module.weight.problem.empty()) {
        d.unmapped.emplace_back(weight_name, module.weight.problem);
      } else if (module.weight_rank != 2) {
        d.unmapped.emplace_back(weight_name,
                                fmt::format("a rank-{} weight sharded by {} on dim {}; transformers' styles shard "
                                            "2-D nn.Linear / nn.Embedding weights",
                                            module.weight_rank, tp_axis, *module.weight.dim));
      } else {
        const bool dim0 = *module.weight.dim == 0;
        if (IsEmbedding(module.name)) {
          d.styles[m] = dim0 ? "embedding_rowwise" : "colwise";
        } else {
          d.styles[m] = dim0 ? "colwise" : "rowwise";
        }
      }
    }
  }
}

// Step 3: a colwise module leaves its output sharded on the last dim; that is right only when a rowwise
// sibling (o_proj for q/k/v, down_proj for gate/up) consumes it. Otherwise the output is gathered.
void GatherUnconsumedColwise(TpDerivation& d) {
  std::map<std::string, bool> parent_has_rowwise;
  auto parent_of = [](const std::string& name) {
    const size_t dot = name.rfind('.');
    return dot == std::string::npos ? std::string() : name.substr(0, dot);
  };
  for (size_t m = 0; m < d.modules.size(); ++m) {
    if (d.styles[m] == "rowwise") parent_has_rowwise[parent_of(d.modules[m].name)] = true;
  }
  for (size_t m = 0; m < d.modules.size(); ++m) {
    if (d.styles[m] == "colwise" && !parent_has_rowwise[parent_of(d.modules[m].name)]) d.styles[m] = "colwise_rep";
  }
}

// Step 4: biases. Colwise shards them with the weight, rowwise replicates them; a plan that does
// otherwise is listed in `unmapped`.
void CheckBiases(const std::string& tp_axis, TpDerivation& d) {
  for (size_t m = 0; m < d.modules.size(); ++m) {
    const Module& module = d.modules[m];
    if (!module.has_bias) continue;
    const std::string& style = d.styles[m];
    const bool bias_sharded = module.bias.dim.has_value();
    const bool colwise_like = style == "colwise" || style == "colwise_rep";
    if (bias_sharded && !module.bias.problem.empty()) {
      d.unmapped.emplace_back(module.bias_name, module.bias.problem);
    } else if (colwise_like && !bias_sharded) {
      d.unmapped.emplace_back(module.bias_name, fmt::format("'{}' shards the bias along with the weight, but the plan "
                                                            "replicates the bias over {}",
                                                            style, tp_axis));
    } else if (!colwise_like && bias_sharded) {
      d.unmapped.emplace_back(
          module.bias_name,
          style.empty()
              ? fmt::format("the bias is sharded by {} but the weight is not; no style shards only the bias", tp_axis)
              : fmt::format("'{}' replicates the bias, but the plan shards it by {}", style, tp_axis));
    }
  }
}

// Step 5: one entry per generic key (layer numbers as `*`) in tp_plan, and in base_model_tp_plan when it
// is under `model.`; modules of one key that need different styles get no entry.
void EmitKeys(TpDerivation& d, TpPlanExport& out) {
  std::vector<std::string> keys;
  std::map<std::string, std::vector<size_t>> members;
  for (size_t m = 0; m < d.modules.size(); ++m) {
    const std::string key = ReplaceLayerNumberByWildcard(d.modules[m].name);
    auto& list = members[key];
    if (list.empty()) keys.push_back(key);
    list.push_back(m);
  }
  for (const std::string& key : keys) {
    const std::vector<size_t>& list = members[key];
    std::vector<std::string> distinct;
    for (size_t m : list) {
      if (std::find(distinct.begin(), distinct.end(), d.styles[m]) == distinct.end()) distinct.push_back(d.styles[m]);
    }
    if (distinct.size() > 1) {
      std::vector<std::string> shown;
      for (const std::string& style : distinct) shown.push_back(style.empty() ? "(not sharded by tp)" : style);
      for (size_t m : list) {
        d.unmapped.emplace_back(d.modules[m].name + ".weight",
                                fmt::format("modules matching '{}' need different styles ({}); one key cannot "
                                            "say that",
                                            key, fmt::join(shown, ", ")));
      }
      continue;
    }
    if (distinct[0].empty()) continue;
    out.tp_plan.emplace_back(key, distinct[0]);
    if (key.starts_with(kBasePrefix)) out.base_model_tp_plan.emplace_back(key.substr(kBasePrefix.size()), distinct[0]);
  }
}

// Step 6: `unmapped` grouped by (generic name, reason), in first-appearance order.
void GroupUnmapped(const TpDerivation& d, TpPlanExport& out) {
  std::map<std::pair<std::string, std::string>, size_t> unmapped_index;
  for (const auto& [name, reason] : d.unmapped) {
    const std::string generic = ReplaceLayerNumberByWildcard(name);
    auto [it, inserted] = unmapped_index.emplace(std::make_pair(generic, reason), out.unmapped.size());
    if (inserted) out.unmapped.push_back(TpUnmapped{generic, reason, 0});
    ++out.unmapped[it->second].tensors;
  }
}

}  // namespace

TpPlanExport DeriveTpPlan(const std::vector<TpTensor>& tensors, const Mesh& mesh, const std::string& tp_axis) {
  TpPlanExport out;
  out.tp_axis = tp_axis;
  std::optional<int> tp_index = mesh.AxisIndex(tp_axis);
  out.tp_size = tp_index ? mesh.shape[static_cast<size_t>(*tp_index)] : 1;
  TpDerivation derivation;
  CollectModules(tensors, mesh, out, derivation);
  AssignStyles(tp_axis, derivation);
  GatherUnconsumedColwise(derivation);
  CheckBiases(tp_axis, derivation);
  EmitKeys(derivation, out);
  GroupUnmapped(derivation, out);
  return out;
}

std::string HfTpPlanExport(const Plan& plan, const ParamTree& tree, const std::string& tp_axis) {
  std::vector<TpTensor> tensors;
  tensors.reserve(plan.params.size());
  for (const ParamPlan& param : plan.params) {
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(param.tensor)];
    tensors.push_back({tensor.name, tensor.shape, param.effective, param.origin != SpecOrigin::kNoCounterpart,
                       FusedMisalignedReason(plan, param)});
  }
  const TpPlanExport tp = DeriveTpPlan(tensors, plan.mesh, tp_axis);
  Json out = Json::object();
  out["tp_axis"] = tp.tp_axis;
  out["tp_size"] = tp.tp_size;
  auto dict = [](const std::vector<std::pair<std::string, std::string>>& entries) {
    Json json = Json::object();
    for (const auto& [key, style] : entries) json[key] = style;
    return json;
  };
  out["base_model_tp_plan"] = dict(tp.base_model_tp_plan);
  out["tp_plan"] = dict(tp.tp_plan);
  Json unmapped = Json::array();
  for (const TpUnmapped& entry : tp.unmapped) {
    Json row = Json::object();
    row["name"] = entry.name;
    row["tensors"] = entry.tensors;
    row["reason"] = entry.reason;
    unmapped.push_back(std::move(row));
  }
  out["unmapped"] = std::move(unmapped);
  Json other = Json::array();
  for (const TpOtherAxes& entry : tp.other_axes) {
    Json row = Json::object();
    row["name"] = entry.name;
    row["tensors"] = entry.tensors;
    row["axes"] = Json(entry.axes);
    other.push_back(std::move(row));
  }
  out["sharded_by_other_axes"] = std::move(other);
  return EmitJson(out);
}

}  // namespace easyplan::planner
