#include "planner/export_jax_activations.h"

#include <string>

#include "core/dtype.h"
#include "planner/activations.h"

namespace easyplan::planner {
namespace {

// The config holding the model's geometry: its text_config for multimodal families (gemma3). The same
// choice as `easyplan activations` makes.
const Json& ModelConfigOf(const Json& config) {
  if (config.contains("num_attention_heads") && !config["num_attention_heads"].is_null()) return config;
  auto text = config.find("text_config");
  if (text != config.end() && text->is_object() && text->contains("num_attention_heads")) return *text;
  return config;
}

}  // namespace

StatusOr<JaxActivations> JaxActivationSpecs(const ActivationTable& table, const rules::Presets& presets,
                                            const Json& config, const Mesh& mesh) {
  const Json& model = ModelConfigOf(config);
  auto torch_dtype = model.find("torch_dtype");
  const std::string dtype =
      torch_dtype != model.end() && torch_dtype->is_string() ? torch_dtype->get<std::string>() : "bfloat16";
  std::optional<DType> parsed_dtype = ParseDType(dtype);
  if (!parsed_dtype) {
    return Status::BadInput({}, "'" + dtype + "' is not a dtype name (the config's torch_dtype; pass --dtype)");
  }
  JaxActivations out;
  for (RuntimeMode mode : {RuntimeMode::kTrain, RuntimeMode::kPrefill, RuntimeMode::kDecode, RuntimeMode::kInsert}) {
    ActivationRequest request;
    request.table = &table;
    request.presets = &presets;
    request.config = &model;
    request.mesh = mesh;
    request.attention.mode = mode;
    request.attention.layout = AttnLayout::kBthd;
    request.dtype = *parsed_dtype;
    EP_ASSIGN_OR_RETURN(ActivationPlan plan, BuildActivationPlan(request));
    std::vector<std::pair<std::string, std::optional<PartitionSpec>>> specs;
    for (const auto& [name, spec] : AttnFields(plan.attention)) {
      specs.emplace_back("attention." + name, spec ? std::optional<PartitionSpec>(*spec) : std::nullopt);
    }
    for (const auto& [name, spec] : plan.residual) specs.emplace_back(name, spec);
    specs.emplace_back("logits", plan.logits);
    specs.emplace_back("labels", plan.labels);
    specs.emplace_back("kv_cache.key", plan.cache_key);
    specs.emplace_back("kv_cache.value", plan.cache_value);
    specs.emplace_back("kv_cache.indexs", plan.cache_index);
    specs.emplace_back("kv_cache.starts", plan.cache_index);
    out.modes.emplace_back(std::string(RuntimeModeName(mode)), std::move(specs));
    if (plan.experts) {
      out.expert_mesh_shape = plan.expert_mesh.shape;
      out.expert_mesh_axis_names = plan.expert_mesh.axis_names;
    }
  }
  return out;
}

}  // namespace easyplan::planner
