#include "planner/runtime_modes.h"

#include <map>
#include <optional>

#include "core/enum_table.h"
#include "rules/rule_set.h"

namespace easyplan::planner {
namespace {

using Axes = ActivationTable::Axes;

PartitionSpec Canonical(PartitionSpec spec) {
  std::vector<PartitionSpec::Entry> entries;
  for (const PartitionSpec::Entry& entry : spec.entries()) {
    PartitionSpec::Entry kept;
    for (const std::string& axis : entry) {
      if (!axis.empty()) kept.push_back(axis);  // JAX reads a falsy entry ("", ()) as None
    }
    entries.push_back(std::move(kept));
  }
  return PartitionSpec(std::move(entries));
}

// The layouts `--layout` takes: EasyDeL's AttnLayout values it implements.
constexpr EnumName<AttnLayout> kAttnLayoutNames[] = {
    {AttnLayout::kBthd, "bthd"},
    {AttnLayout::kBhtd, "bhtd"},
};

}  // namespace

std::string_view AttnLayoutName(AttnLayout layout) { return NameOf(kAttnLayoutNames, layout); }

StatusOr<AttnLayout> ParseAttnLayout(std::string_view text) {
  if (const std::optional<AttnLayout> layout = ParseEnum(kAttnLayoutNames, text)) return *layout;
  if (text == "thd") {
    return Status::BadInput({},
                            "--layout thd is not implemented by EasyDeL: OperationMetadata.get_shardings raises "
                            "NotImplementedError(\"Layout 'thd' is not implemented\")",
                            {"use --layout bthd (the default) or bhtd"});
  }
  return Status::BadInput({}, "--layout '" + std::string(text) + "' is not an attention layout",
                          {"expected one of \"bthd\", \"bhtd\" (EasyDeL rejects \"thd\")"});
}

StatusOr<PartitionSpec> ResolveAxes(const Axes& axes, const rules::Presets& presets, const Json& config, Mode mode) {
  rules::SpecSource source;
  source.dims = axes;
  EP_ASSIGN_OR_RETURN(PartitionSpec spec, presets.Resolve(source, config, mode));
  return Canonical(std::move(spec));
}

StatusOr<AttnShardingRules> GetShardings(const ActivationTable& table, const rules::Presets& presets,
                                         const Json& config, const AttnOptions& options) {
  const std::string layout(AttnLayoutName(options.layout));
  const Mode mode = options.mode;
  auto axes_of = [&](const ActivationTable::AttnField& field) -> const Axes* {
    auto find = [&](const std::string& key) -> const Axes* {
      auto it = field.variants.find(key);
      return it == field.variants.end() ? nullptr : &it->second;
    };
    if (field.name == "softmax_aux" && options.softmax_aux_ndim == 2) {
      if (const Axes* axes = find("ndim2")) return axes;
    }
    if (options.qkv_mni) {
      if (const Axes* axes = find(layout + "_mni")) return axes;
    }
    if (const Axes* axes = find(layout)) return axes;
    return find("axes");
  };
  std::map<std::string, PartitionSpec> specs;
  for (const ActivationTable::AttnField& field : table.attention()) {
    if (!field.same_as.empty()) continue;
    const Axes* axes = axes_of(field);
    if (!axes) return Status::Internal("attention field " + field.name + " has no axes for layout " + layout);
    EP_ASSIGN_OR_RETURN(specs[field.name], ResolveAxes(*axes, presets, config, mode));
  }
  for (const ActivationTable::AttnField& field : table.attention()) {
    if (!field.same_as.empty()) specs[field.name] = specs[field.same_as];
  }
  AttnShardingRules rules;
  rules.query3d = specs["query3d"];
  rules.query = specs["query"];
  rules.key = specs["key"];
  rules.value = specs["value"];
  rules.bias = specs["bias"];
  rules.mask = specs["mask"];
  rules.output = specs["output"];
  rules.q_segment_ids = specs["q_segment_ids"];
  rules.kv_segment_ids = specs["kv_segment_ids"];
  if (options.softmax_aux_ndim) rules.softmax_aux = specs["softmax_aux"];
  return rules;
}

std::vector<std::pair<std::string, const PartitionSpec*>> AttnFields(const AttnShardingRules& rules) {
  return {{"query3d", &rules.query3d},
          {"query", &rules.query},
          {"key", &rules.key},
          {"value", &rules.value},
          {"bias", &rules.bias},
          {"mask", &rules.mask},
          {"output", &rules.output},
          {"q_segment_ids", &rules.q_segment_ids},
          {"kv_segment_ids", &rules.kv_segment_ids},
          {"softmax_aux", rules.softmax_aux ? &*rules.softmax_aux : nullptr}};
}

}  // namespace easyplan::planner
