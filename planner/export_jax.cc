#include "planner/export_jax.h"

#include <fmt/format.h>

#include "core/emit.h"

namespace easyplan::planner {
namespace {

std::string PythonTuple(const std::vector<std::string>& items) {
  if (items.size() == 1) return "(" + items[0] + ",)";
  return fmt::format("({})", fmt::join(items, ", "));
}

}  // namespace

std::string PythonString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          out += fmt::format("\\x{:02x}", byte);
        } else {
          out += c;  // UTF-8 passes through: Python source is UTF-8 by default
        }
    }
  }
  return out + "\"";
}

std::string PythonPartitionSpec(const PartitionSpec& spec) {
  std::vector<std::string> entries;
  for (const PartitionSpec::Entry& entry : spec.entries()) {
    if (entry.empty()) {
      entries.push_back("None");
    } else if (entry.size() == 1) {
      entries.push_back(PythonString(entry[0]));
    } else {
      std::vector<std::string> names;
      for (const std::string& axis : entry) names.push_back(PythonString(axis));
      entries.push_back(PythonTuple(names));
    }
  }
  return fmt::format("PartitionSpec({})", fmt::join(entries, ", "));
}

std::string JaxModuleText(const Mesh& mesh, const std::vector<JaxRule>& rules, const std::vector<JaxParam>& params,
                          const std::vector<std::string>& header, const JaxActivations* activations) {
  std::string text;
  for (const std::string& line : header) text += line.empty() ? "#\n" : "# " + line + "\n";
  text += "from jax.sharding import PartitionSpec\n\n";

  std::vector<std::string> names;
  std::vector<std::string> sizes;
  for (size_t k = 0; k < mesh.shape.size(); ++k) {
    names.push_back(PythonString(mesh.axis_names[k]));
    sizes.push_back(std::to_string(mesh.shape[k]));
  }
  text += "# jax.make_mesh(MESH_SHAPE, MESH_AXIS_NAMES); device d sits at position d of the row-major mesh.\n";
  text += "MESH_AXIS_NAMES = " + PythonTuple(names) + "\n";
  text += "MESH_SHAPE = " + PythonTuple(sizes) + "\n";
  if (!mesh.dcn_shape.empty()) {
    std::vector<std::string> dcn;
    for (int64_t v : mesh.dcn_shape) dcn.push_back(std::to_string(v));
    text += "# Multi-slice: slices per axis (create_hybrid_device_mesh's dcn_mesh_shape; ICI = MESH_SHAPE / this).\n";
    text += "MESH_DCN_SHAPE = " + PythonTuple(dcn) + "\n";
  }

  text += "\n# Ordered partition rules for eformer's match_partition_rules: re.search, first match wins,\n";
  text += "# scalars get PartitionSpec(). Specs are resolved to mesh axes under the config.\n";
  text += "PARTITION_RULES = (\n";
  for (const JaxRule& rule : rules) {
    text += "    (" + PythonString(rule.pattern) + ", " + PythonPartitionSpec(rule.spec) + "),\n";
  }
  text += ")\n";

  text += "\n# The effective PartitionSpec of every parameter (after the correction for its shape).\n";
  text += "PARAM_SPECS = {\n";
  for (const JaxParam& param : params) {
    text += "    " + PythonString(param.name) + ": " + PythonPartitionSpec(param.spec) + ",\n";
  }
  text += "}\n";
  if (!activations) return text;

  text += "\n# Activation specs per runtime mode, raw as EasyDeL resolves them (no shape correction; size-1 axes\n";
  text += "# kept): OperationMetadata.get_shardings for attention, the residual-stream presets, the KV cache as\n";
  text += "# stored (prefill rules). None: EasyDeL applies no constraint in that mode.\n";
  text += "ACTIVATION_LAYOUT = " + PythonString(activations->layout) + "\n";
  text += "ACTIVATION_SPECS = {\n";
  for (const auto& [mode, specs] : activations->modes) {
    text += "    " + PythonString(mode) + ": {\n";
    for (const auto& [name, spec] : specs) {
      text += "        " + PythonString(name) + ": " + (spec ? PythonPartitionSpec(*spec) : "None") + ",\n";
    }
    text += "    },\n";
  }
  text += "}\n";
  if (activations->expert_mesh_shape) {
    std::vector<std::string> expert_names, expert_sizes;
    for (size_t k = 0; k < 3; ++k) {
      expert_names.push_back(PythonString(activations->expert_mesh_axis_names[k]));
      expert_sizes.push_back(std::to_string((*activations->expert_mesh_shape)[k]));
    }
    text += "\n# The (dp, ep, tp) expert mesh EasyDeL folds for MoE blocks: a row-major reshape of the devices,\n";
    text += "# jax.sharding.Mesh(np.asarray(devices).reshape(EXPERT_MESH_SHAPE), EXPERT_MESH_AXIS_NAMES).\n";
    text += "EXPERT_MESH_AXIS_NAMES = " + PythonTuple(expert_names) + "\n";
    text += "EXPERT_MESH_SHAPE = " + PythonTuple(expert_sizes) + "\n";
  }
  return text;
}

Json JaxShardingsJson(const Mesh& mesh, const std::vector<JaxParam>& params, const JaxActivations* activations) {
  Json mesh_json = Json::object();
  Json axis_names = Json::array();
  Json shape = Json::object();
  for (size_t k = 0; k < mesh.shape.size(); ++k) {
    axis_names.push_back(mesh.axis_names[k]);
    shape[mesh.axis_names[k]] = mesh.shape[k];
  }
  mesh_json["axis_names"] = std::move(axis_names);
  mesh_json["shape"] = std::move(shape);
  Json out = Json::object();
  for (const JaxParam& param : params) {
    Json leaf = Json::object();
    leaf["mesh"] = mesh_json;
    leaf["partition_spec"] = param.spec.ToJson();
    Json dims = Json::array();
    for (int64_t d : param.shape.dims()) dims.push_back(d);
    leaf["shape"] = std::move(dims);
    out[param.name] = std::move(leaf);
  }
  if (!activations) return out;
  Json extra = Json::object();
  extra["layout"] = activations->layout;
  Json modes = Json::object();
  for (const auto& [mode, specs] : activations->modes) {
    Json entries = Json::object();
    for (const auto& [name, spec] : specs) entries[name] = spec ? spec->ToJson() : Json();
    modes[mode] = std::move(entries);
  }
  extra["modes"] = std::move(modes);
  if (activations->expert_mesh_shape) {
    Json expert = Json::object();
    expert["axis_names"] = Json(activations->expert_mesh_axis_names);
    expert["shape"] = Json(*activations->expert_mesh_shape);
    extra["expert_mesh"] = std::move(expert);
  }
  out["__activations__"] = std::move(extra);
  return out;
}

std::vector<JaxParam> JaxParamsOf(const Plan& plan, const ParamTree& tree) {
  std::vector<JaxParam> params;
  params.reserve(plan.params.size());
  for (const ParamPlan& param : plan.params) {
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(param.tensor)];
    params.push_back({tensor.name, tensor.shape, param.effective});
  }
  return params;
}

StatusOr<std::string> JaxModuleExport(const Plan& plan, const ParamTree& tree, const rules::RuleSet& rules,
                                      const rules::Presets& presets, const Json& config,
                                      const JaxActivations& activations, const std::string& easydel_version) {
  std::vector<JaxRule> jax_rules;
  for (const rules::Rule& rule : rules.rules) {
    int case_index = -1;
    EP_ASSIGN_OR_RETURN(PartitionSpec spec, ResolveRuleSpec(rule, presets, config, &case_index, nullptr));
    jax_rules.push_back({rule.pattern, std::move(spec)});
  }
  std::vector<std::string> header = {
      "Generated by `easyplan export --to jax`: data only, no code.",
      (easydel_version.empty() ? "" : "EasyDeL " + easydel_version + ", ") + "mesh " + plan.mesh.ToString() +
          ", rules " + rules.source + ", uneven dims: " + std::string(UnevenModeName(plan.uneven)),
  };
  if (rules.layout != tree.layout) {
    header.push_back("PARTITION_RULES match EasyDeL parameter paths; PARAM_SPECS use this tree's (HF) names.");
  }
  return JaxModuleText(plan.mesh, jax_rules, JaxParamsOf(plan, tree), header, &activations);
}

std::string JaxJsonExport(const Plan& plan, const ParamTree& tree, const JaxActivations& activations) {
  return EmitJson(JaxShardingsJson(plan.mesh, JaxParamsOf(plan, tree), &activations));
}

}  // namespace easyplan::planner
